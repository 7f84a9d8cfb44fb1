// Sources and credentials: shapes shared by every layer (storage, drivers, domain, HTTP).

export type SourceType = 'project' | 'database';
export type Driver = 'sqlite' | 'postgres' | 'mysql' | 'redis' | 'mongo';
export const DRIVERS: readonly Driver[] = ['sqlite', 'postgres', 'mysql', 'redis', 'mongo'];

export interface Source {
  id: string;
  organizationId: string;
  type: SourceType;
  displayName: string;
  /** database sources only */
  driver: Driver | null;
  timeZone: string;
  /** 1 = Monday .. 7 = Sunday */
  beginningOfWeek: number;
  granularities: string[];
  defaultTimeframe: string;
  defaultGranularity: string;
  /** seconds; null keeps data forever */
  expireAfter: number | null;
  /** projects: granularity -> timeframe kept (`{"1m": "7d"}`), overriding expireAfter; null or absent:
   *  none (optional so that sources built elsewhere, e.g. in tests, need not name it) */
  retention?: Record<string, string> | null;
  projectClusterId: string | null;
  /** driver fields (database sources), credentials included: never presented */
  config: Record<string, unknown>;
  /** database sources: 'pending' | 'ready' | 'failed' */
  setupStatus: string | null;
  createdAt: number;
}

export interface UserAuth {
  kind: 'user';
  tokenId: string;
  userId: string;
  organizationId: string | null;
  role: string | null;
  /** the token came from the interface's session cookie, not an Authorization header */
  viaCookie?: boolean;
  /** the interface's session (its cookie); tokenId is then the session's id */
  sessionId?: string;
}

export interface SourceAuth {
  kind: 'source';
  tokenId: string;
  sourceId: string;
  organizationId: string;
  /** the user who minted the token */
  userId: string;
  read: boolean;
  write: boolean;
}

export type Auth = UserAuth | SourceAuth;

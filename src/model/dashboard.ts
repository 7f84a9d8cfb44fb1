// Dashboards and dashboard groups as the domain sees them. Times are epoch milliseconds.
import type { SourceType } from './source';

export interface Dashboard {
  id: string;
  organizationId: string;
  userId: string;
  sourceType: SourceType;
  sourceId: string;
  /** the source id for database sources, else null */
  databaseId: string | null;
  groupId: string | null;
  name: string;
  key: string;
  visibility: boolean;
  locked: boolean;
  position: number;
  defaultTimeframe: string;
  defaultGranularity: string;
  payload: Record<string, unknown>;
  segments: unknown[];
  insertedAt: number;
  updatedAt: number;
  /** the user who last changed it; null when unknown (older rows, source tokens) */
  updatedBy?: string | null;
}

export interface DashboardGroup {
  id: string;
  organizationId: string;
  name: string;
  position: number;
  insertedAt: number;
  updatedAt: number;
  /** the user who last changed it; null when unknown (older rows, source tokens) */
  updatedBy?: string | null;
}

/** Field name -> messages, the body of a 422 (SPEC section 2). */
export type FieldErrors = Record<string, string[]>;

// An organization ready for dashboard tests: a user with an organization, a database source (SQLite;
// PostgreSQL in cluster mode), a project source (when projects are enabled) and source tokens, all
// made through the bootstrap API.
import assert from 'node:assert/strict';
import { clusterMode, request, signupWithOrganization, type Agent } from './server';

export interface DashboardOrg extends Agent {
  userId: string;
  databaseId: string;
  projectId: string | null;
  /** a read-and-write source token of the database source, minted by this organization's user */
  databaseToken: string;
}

let files = 0;

export async function setupOrganization(
  server: { url: string },
  options: { projects?: boolean; project?: Record<string, unknown> } = {},
): Promise<DashboardOrg> {
  const agent = await signupWithOrganization(server);
  const token = agent.userToken;
  const me = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, { token });
  assert.equal(me.status, 200, me.text);
  files += 1;
  const db = await request(
    server,
    'POST',
    '/api/v1/bootstrap/databases',
    {
      display_name: 'Store',
      // cluster mode refuses SQLite sources: a PostgreSQL one there (never opened by these tests)
      ...(clusterMode
        ? {
            driver: 'postgres',
            host: 'db.internal',
            database_name: `dash_${process.pid}_${files}`,
            username: 'svc',
          }
        : { driver: 'sqlite', file_path: `dash-${process.pid}-${files}.sqlite` }),
    },
    { token },
  );
  assert.equal(db.status, 201, db.text);
  const databaseId = db.body.data.source.id as string;
  let projectId: string | null = null;
  if (options.projects !== false) {
    const body = {
      name: 'Project',
      granularities: ['1h', '1d', '1w'],
      default_timeframe: '7d',
      ...options.project,
    };
    const p = await request(server, 'POST', '/api/v1/bootstrap/projects', body, { token });
    assert.equal(p.status, 201, p.text);
    projectId = p.body.data.source.id as string;
  }
  const t = await request(
    server,
    'POST',
    '/api/v1/bootstrap/source-tokens',
    { source_type: 'database', source_id: databaseId, read: true, write: true },
    { token },
  );
  assert.equal(t.status, 201, t.text);
  return {
    ...agent,
    userId: me.body.data.user.id,
    databaseId,
    projectId,
    databaseToken: t.body.data.token.value,
  };
}

/** A minimal valid create body on the organization's database source. */
export function dashboardBody(
  org: DashboardOrg,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name: 'Signups',
    key: 'event::signup',
    source: { type: 'database', id: org.databaseId },
    ...extra,
  };
}

/** POST /dashboards that must succeed; returns the dashboard object. */
export async function createDashboard(
  server: { url: string },
  token: string,
  body: Record<string, unknown>,
): Promise<Record<string, any>> {
  const res = await request(server, 'POST', '/api/v1/dashboards', body, { token });
  assert.equal(res.status, 201, res.text);
  return res.body.data;
}

export const DASHBOARD_FIELDS = [
  'id',
  'name',
  'key',
  'visibility',
  'locked',
  'source_type',
  'source_id',
  'organization_id',
  'user_id',
  'database_id',
  'group_id',
  'position',
  'default_timeframe',
  'default_granularity',
  'payload',
  'segments',
  'inserted_at',
  'updated_at',
];

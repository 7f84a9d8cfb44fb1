// The alert channels repository on PostgreSQL (cluster mode): the same methods and rows as
// ../channels.ts, in PostgreSQL's dialect.
//
// The per-organization cap is counted under the organization's row lock (FOR NO KEY UPDATE: it
// serialises the organization's channel inserts, not the foreign-key checks of other inserts), so
// concurrent creates never pass it; a change reads the channel FOR NO KEY UPDATE and writes what
// the caller makes of that row in the same transaction, so of two changes on any nodes the second
// is made of the row the first wrote; a delete is one statement reporting whether the channel was
// still there.
import type { PgStore } from './client';
import {
  channelRow,
  toChannel,
  type ChannelChange,
  type ChannelRow,
  type ChannelsRepo,
  type StoredChannel,
} from '../channels';

const COLUMNS = [
  'id',
  'organization_id',
  'name',
  'type',
  'preset',
  'settings',
  'secrets',
  'inserted_at',
  'updated_at',
] as const satisfies readonly (keyof ChannelRow)[];

const INSERT = `INSERT INTO channels (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;
const UPDATE = `UPDATE channels SET name = $3, type = $4, preset = $5, settings = $6, secrets = $7, updated_at = $8
  WHERE id = $1 AND organization_id = $2`;

export function createPgChannelsRepo(store: PgStore): ChannelsRepo {
  const count = async (sql: Pick<PgStore, 'one'>, organizationId: string): Promise<number> =>
    (
      await sql.one<{ n: number }>('SELECT COUNT(*) AS n FROM channels WHERE organization_id = $1', [
        organizationId,
      ])
    )?.n ?? 0;

  return {
    list: async (organizationId: string): Promise<StoredChannel[]> =>
      (
        await store.rows<ChannelRow>(
          'SELECT * FROM channels WHERE organization_id = $1 ORDER BY inserted_at, id COLLATE "C"',
          [organizationId],
        )
      ).map(toChannel),
    async get(organizationId: string, id: string): Promise<StoredChannel | null> {
      const r = await store.one<ChannelRow>('SELECT * FROM channels WHERE id = $1 AND organization_id = $2', [
        id,
        organizationId,
      ]);
      return r ? toChannel(r) : null;
    },
    exists: async (organizationId: string, id: string): Promise<boolean> =>
      (await store.one('SELECT 1 AS one FROM channels WHERE id = $1 AND organization_id = $2', [
        id,
        organizationId,
      ])) !== undefined,
    count: (organizationId: string): Promise<number> => count(store, organizationId),
    insert: (c: StoredChannel, max: number): Promise<boolean> =>
      store.tx(async (sql) => {
        await sql.one('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [c.organizationId]);
        if ((await count(sql, c.organizationId)) >= max) return false;
        const row = channelRow(c);
        await sql.run(
          INSERT,
          COLUMNS.map((k) => row[k]),
        );
        return true;
      }),
    update: (organizationId: string, id: string, change: ChannelChange): Promise<StoredChannel | null> =>
      store.tx(async (sql) => {
        const read = await sql.one<ChannelRow>(
          'SELECT * FROM channels WHERE id = $1 AND organization_id = $2 FOR NO KEY UPDATE',
          [id, organizationId],
        );
        if (!read) return null;
        const next: StoredChannel = {
          ...change(toChannel(read)),
          id,
          organizationId,
          insertedAt: read.inserted_at,
        };
        const r = channelRow(next);
        await sql.run(UPDATE, [
          r.id,
          r.organization_id,
          r.name,
          r.type,
          r.preset,
          r.settings,
          r.secrets,
          r.updated_at,
        ]);
        return next;
      }),
    remove: async (organizationId: string, id: string): Promise<boolean> =>
      (await store.run('DELETE FROM channels WHERE id = $1 AND organization_id = $2', [id, organizationId])) >
      0,
  };
}

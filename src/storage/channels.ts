// Alert channels (SPEC 13): prepared statements only, every statement scoped to an organization,
// so a token of one organization can never reach another organization's channel by id. Secrets
// arrive here already encrypted (the domain holds the secret box) and leave encrypted.
//
// The repository answers with promises (docs/cluster.md, "Step 1 as built"): the channel cap is
// counted and the row inserted in one transaction (insert); a change reads the channel and writes
// what the caller makes of that row in one transaction (update), so of two changes at once the
// second is made of the row the first wrote; a change or delete reports whether the channel was
// still there.
import type { Db } from './db';

export type ChannelType = 'webhook' | 'ntfy' | 'gotify' | 'email';
export type ChannelPreset = 'slack' | 'discord' | 'mattermost' | 'teams';

export interface ChannelRow {
  id: string;
  organization_id: string;
  name: string;
  type: ChannelType;
  preset: ChannelPreset | null;
  settings: string;
  secrets: string;
  inserted_at: number;
  updated_at: number;
}

export interface StoredChannel {
  id: string;
  organizationId: string;
  name: string;
  type: ChannelType;
  preset: ChannelPreset | null;
  /** the channel's fields without secrets */
  settings: Record<string, unknown>;
  /** secret field -> encrypted value (`enc:v1:...`) */
  secrets: Record<string, string>;
  insertedAt: number;
  updatedAt: number;
}

function objectOf(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // a damaged row reads as empty: sending through it then fails with a field missing
  }
  return {};
}

export function toChannel(r: ChannelRow): StoredChannel {
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(objectOf(r.secrets)))
    if (typeof value === 'string') secrets[name] = value;
  return {
    id: r.id,
    organizationId: r.organization_id,
    name: r.name,
    type: r.type,
    preset: r.preset,
    settings: objectOf(r.settings),
    secrets,
    insertedAt: r.inserted_at,
    updatedAt: r.updated_at,
  };
}

/**
 * A change of a channel: the channel to store, made of the channel as read inside the change's
 * transaction. Synchronous, with no effects outside what it answers (PostgreSQL may run it again
 * after a deadlock); an error it throws comes out of update, nothing written. Only the name, type,
 * preset, settings, secrets and updatedAt it answers are written.
 */
export type ChannelChange = (current: StoredChannel) => StoredChannel;

/** The row a channel is stored as (settings and secrets as JSON text). */
export const channelRow = (c: StoredChannel): ChannelRow => ({
  id: c.id,
  organization_id: c.organizationId,
  name: c.name,
  type: c.type,
  preset: c.preset,
  settings: JSON.stringify(c.settings),
  secrets: JSON.stringify(c.secrets),
  inserted_at: c.insertedAt,
  updated_at: c.updatedAt,
});

export function createChannelsRepo(db: Db) {
  const list = db.prepare<[string], ChannelRow>(
    'SELECT * FROM channels WHERE organization_id = ? ORDER BY inserted_at, id',
  );
  const byId = db.prepare<[string, string], ChannelRow>(
    'SELECT * FROM channels WHERE id = ? AND organization_id = ?',
  );
  const exists = db.prepare<[string, string], { one: number }>(
    'SELECT 1 AS one FROM channels WHERE id = ? AND organization_id = ?',
  );
  const count = db.prepare<[string], { n: number }>(
    'SELECT COUNT(*) AS n FROM channels WHERE organization_id = ?',
  );
  const insert = db.prepare(
    `INSERT INTO channels (id, organization_id, name, type, preset, settings, secrets, inserted_at, updated_at)
     VALUES (@id, @organization_id, @name, @type, @preset, @settings, @secrets, @inserted_at, @updated_at)`,
  );
  const update = db.prepare(
    `UPDATE channels SET name = @name, type = @type, preset = @preset, settings = @settings, secrets = @secrets,
       updated_at = @updated_at WHERE id = @id AND organization_id = @organization_id`,
  );
  const remove = db.prepare<[string, string]>('DELETE FROM channels WHERE id = ? AND organization_id = ?');
  /** One IMMEDIATE transaction: what it reads still holds when it writes. */
  const atomically = <T>(fn: () => T): T => db.transaction(fn).immediate();

  return {
    list: async (organizationId: string): Promise<StoredChannel[]> => list.all(organizationId).map(toChannel),
    async get(organizationId: string, id: string): Promise<StoredChannel | null> {
      const r = byId.get(id, organizationId);
      return r ? toChannel(r) : null;
    },
    /** whether `id` (lower-case) names a channel of the organization: what a monitor's delivery_channels may name */
    exists: async (organizationId: string, id: string): Promise<boolean> =>
      exists.get(id, organizationId) !== undefined,
    count: async (organizationId: string): Promise<number> => count.get(organizationId)?.n ?? 0,
    /** The per-organization cap counted and the channel inserted together: false (nothing written) at the cap. */
    insert: async (c: StoredChannel, max: number): Promise<boolean> =>
      atomically(() => {
        if ((count.get(c.organizationId)?.n ?? 0) >= max) return false;
        insert.run(channelRow(c));
        return true;
      }),
    /**
     * Atomic: the channel read and `change`'s answer for it written in one IMMEDIATE transaction.
     * The channel as stored, or null when it is gone (deleted since it was read): nothing written.
     */
    update: async (
      organizationId: string,
      id: string,
      change: ChannelChange,
    ): Promise<StoredChannel | null> =>
      atomically(() => {
        const r = byId.get(id, organizationId);
        if (!r) return null;
        const next: StoredChannel = {
          ...change(toChannel(r)),
          id,
          organizationId,
          insertedAt: r.inserted_at,
        };
        update.run(channelRow(next));
        return next;
      }),
    /** False when the channel was already gone. */
    remove: async (organizationId: string, id: string): Promise<boolean> =>
      remove.run(id, organizationId).changes > 0,
  };
}

export type ChannelsRepo = ReturnType<typeof createChannelsRepo>;

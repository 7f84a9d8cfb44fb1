// Versioned schema migrations, tracked in PRAGMA user_version. Each entry runs once, in order,
// inside one transaction. Never edit a migration that has shipped: append a new one.
import type { Db } from './db';
import { CORE_SCHEMA } from './schema/001_core';
import { METRICS_SCHEMA } from './schema/002_metrics';
import { DASHBOARD_SHARES_SCHEMA } from './schema/003_dashboard_shares';
import { RETENTION_SCHEMA } from './schema/004_retention';
import { migrateMetricLog } from './schema/005_metric_log';
import { FOLD_CHUNKS_SCHEMA } from './schema/006_fold_chunks';
import { SESSIONS_SCHEMA } from './schema/007_sessions';
import { TRANSPONDERS_SCHEMA } from './schema/008_transponders';
import { DASHBOARD_EDITORS_SCHEMA } from './schema/009_dashboard_editors';
import { INVITATIONS_SCHEMA } from './schema/012_invitations';
import { CHANNELS_SCHEMA } from './schema/011_channels';
import { ALERTS_SCHEMA } from './schema/010_alerts';
import { NOTIFY_EVERY_SCHEMA } from './schema/013_notify_every';
import { MONITOR_REPORTS_SCHEMA } from './schema/014_monitor_reports';

/** SQL text, or a function for a migration that moves data. */
type Migration = string | ((db: Db) => void);

const MIGRATIONS: readonly Migration[] = [
  CORE_SCHEMA,
  METRICS_SCHEMA,
  DASHBOARD_SHARES_SCHEMA,
  RETENTION_SCHEMA,
  migrateMetricLog,
  FOLD_CHUNKS_SCHEMA,
  SESSIONS_SCHEMA,
  TRANSPONDERS_SCHEMA,
  DASHBOARD_EDITORS_SCHEMA,
  INVITATIONS_SCHEMA,
  CHANNELS_SCHEMA,
  ALERTS_SCHEMA, // 010 by its name, after the invitations and channels that shipped first
  NOTIFY_EVERY_SCHEMA,
  MONITOR_REPORTS_SCHEMA,
];

/** The schema version this build writes (restore refuses newer files). */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Migrates to this build's version, or to `upTo` (restore builds the schema of a backup's version). */
export function migrate(db: Db, upTo: number = MIGRATIONS.length): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this build (${MIGRATIONS.length})`);
  }
  for (let v = current; v < Math.min(upTo, MIGRATIONS.length); v++) {
    db.transaction(() => {
      const migration = MIGRATIONS[v]!;
      if (typeof migration === 'string') db.exec(migration);
      else migration(db);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
  return MIGRATIONS.length;
}

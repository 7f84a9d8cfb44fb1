// Start-up migration of database source secrets: passwords and connection URLs that an older
// version stored in plaintext are encrypted in place (lib/secrets.ts), so none stays readable in
// service.db. Idempotent: encrypted values are left as they are.
import type { Db } from './db';
import { inTransaction } from './db';
import { encryptSecrets, type SecretBox } from '../lib/secrets';

/** Encrypts every plaintext secret of the database sources; returns how many sources changed. */
export function encryptStoredSecrets(db: Db, box: SecretBox): number {
  const rows = db
    .prepare<[], { id: string; config: string }>(
      "SELECT id, config FROM sources WHERE type = 'database' AND driver != 'sqlite'",
    )
    .all();
  const update = db.prepare<[string, string]>('UPDATE sources SET config = ? WHERE id = ?');
  let changed = 0;
  inTransaction(db, () => {
    for (const row of rows) {
      let config: Record<string, unknown>;
      try {
        config = JSON.parse(row.config) as Record<string, unknown>;
      } catch {
        continue;
      }
      const encrypted = encryptSecrets(box, config);
      if (JSON.stringify(encrypted) === JSON.stringify(config)) continue;
      update.run(JSON.stringify(encrypted), row.id);
      changed += 1;
    }
  });
  return changed;
}

// Setup of a postgres or mysql source whose database already holds a trifle_stats table of another
// identifier mode: refused with a message naming both layouts (422 through the API), and the table
// is left as it was.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMysqlStore } from '../../src/drivers/network/mysql';
import { createPostgresStore } from '../../src/drivers/network/postgres';
import type { WriteSetStore } from '../../src/drivers/types';
import type { Factory } from './helpers';
import { mysqlFactory, postgresFactory, type NetworkFixture } from './network-factories';
import { SERVERS } from './network';

const CASES: Array<[Factory, (database: string) => WriteSetStore]> = [
  [
    postgresFactory('partial'),
    (database) =>
      createPostgresStore({
        host: SERVERS.postgres.host,
        port: SERVERS.postgres.port,
        username: SERVERS.postgres.user,
        database,
        mode: 'full',
        timeZone: 'UTC',
      }),
  ],
  [
    mysqlFactory('partial'),
    (database) =>
      createMysqlStore({
        host: SERVERS.mysql.host,
        port: SERVERS.mysql.port,
        username: SERVERS.mysql.user,
        database,
        mode: 'full',
        timeZone: 'UTC',
      }),
  ],
];

for (const [factory, fullStore] of CASES) {
  describe(`layout mismatch: ${factory.name}`, { skip: factory.skip }, () => {
    after(() => factory.finish?.());

    test('a full-mode setup over a partial-mode table names both layouts and keeps the table', async () => {
      const fx = (await factory.create()) as NetworkFixture;
      try {
        await fx.store.setup(); // the partial layout: key, at, data
        const full = fullStore(fx.location.database!);
        try {
          await assert.rejects(
            full.setup(),
            /has columns \(key, at, data\), not the full identifier layout \(key, data\)/,
          );
        } finally {
          await full.close();
        }
        assert.equal((await fx.store.setup()).status, 'ready', 'the partial table is untouched');
      } finally {
        await fx.dispose();
      }
    });
  });
}

// The same points written through the HTTP API into a project (the embedded store, the reference)
// and into a database source of every driver and identifier mode read back alike: track and
// assert, nested and dotted paths, the system key and untracked points, every granularity in
// Europe/Bratislava across both DST changes of 2024.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProjectWithToken, startTestServer, type Agent, type TestServer } from '../helpers/server';
import { MODES, skipReason, type NetworkDriver } from './network';
import {
  type SourceAccess,
  databaseSource,
  driverFields,
  scratchLocation,
  series,
  track,
} from './http-sources';

const SETTINGS = { time_zone: 'Europe/Bratislava', granularities: '1m,1h,6h,1d,1w,1mo,1q,1y' };

/** Events on both sides of each change, at the instants where flooring differs. */
const POINTS = [
  { key: 'shop', at: '2024-03-30T22:30:00Z', values: { orders: 1, amount: { net: 10, tax: 2 } } },
  { key: 'shop', at: '2024-03-31T00:59:00Z', values: { orders: 1, 'amount.net': 5 } },
  { key: 'shop', at: '2024-03-31T01:00:00Z', values: { orders: 2 } },
  { key: 'shop', at: '2024-03-31T10:00:00+02:00', values: { orders: 1, country: { SK: 1 } } },
  { key: 'shop', at: '2024-10-27T00:30:00Z', values: { orders: 1 } },
  { key: 'shop', at: '2024-10-27T01:30:00Z', values: { orders: 4 } },
  { key: 'shop', at: '2024-10-27T22:59:00Z', values: { orders: 1, country: { SK: 2, CZ: 1 } } },
  { key: 'shop', at: '2024-12-31T23:30:00Z', values: { orders: 1 } },
  { key: 'shop', at: '2024-06-15T12:00:00Z', values: { orders: 3, gauge: 7 } },
  { key: 'shop', at: '2024-06-15T12:10:00Z', values: { gauge: 4 }, operation: 'assert' },
  { key: 'web.eu::shop', at: '2024-03-31T03:00:00+02:00', values: { hits: 1 } },
  { key: 'session::abc', at: '2024-03-31T03:00:00+02:00', values: { n: 1 }, untracked: true },
];

const READS: Array<[string, string, string | null, string[]]> = [
  ['2024-03-30T22:00:00Z', '2024-03-31T03:00:00Z', 'shop', ['1m', '1h', '6h']],
  ['2024-10-26T23:00:00Z', '2024-10-27T03:00:00Z', 'shop', ['1h', '6h']],
  ['2024-01-01T00:00:00+01:00', '2025-01-01T12:00:00+01:00', 'shop', ['1d', '1w', '1mo', '1q', '1y']],
  ['2024-03-30T00:00:00Z', '2024-04-02T00:00:00Z', null, ['1h', '1d', '1mo']],
  ['2024-03-30T00:00:00Z', '2024-04-02T00:00:00Z', 'web.eu::shop', ['1d']],
  ['2024-03-30T00:00:00Z', '2024-04-02T00:00:00Z', 'session::abc', ['1d']],
];

type Target = {
  name: string;
  driver: NetworkDriver | 'sqlite';
  mode: 'full' | 'partial' | 'separated';
  skip: string | false;
};
const TARGETS: Target[] = [
  ...(['full', 'partial', 'separated'] as const).map((mode): Target => ({
    name: `sqlite (${mode})`,
    driver: 'sqlite',
    mode,
    skip: false,
  })),
  ...(['postgres', 'mysql', 'redis', 'mongo'] as const).flatMap((driver) =>
    MODES[driver].map((mode): Target => ({
      name: `${driver} (${mode})`,
      driver,
      mode,
      skip: skipReason(driver),
    })),
  ),
];

describe('every store reads what the embedded store reads, through the HTTP API', () => {
  let server: TestServer;
  let agent: Agent;
  let reference: SourceAccess;
  const removals: Array<() => Promise<void>> = [];
  before(async () => {
    server = await startTestServer();
    const project = await createProjectWithToken(server, { ...SETTINGS });
    agent = project;
    reference = { sourceId: project.sourceId, token: project.sourceToken };
    await track(server, reference, POINTS);
  });
  after(async () => {
    await server.stop();
    for (const remove of removals) await remove().catch(() => undefined);
  });

  for (const target of TARGETS) {
    test(target.name, { skip: target.skip }, async () => {
      const place = await scratchLocation(target.driver);
      removals.push(place.remove);
      const access = await databaseSource(server, agent, {
        ...driverFields(target.driver, target.mode, place.at),
        ...SETTINGS,
      });
      await track(server, access, POINTS);
      for (const [from, to, key, granularities] of READS) {
        for (const g of granularities) {
          const want = await series(server, reference, key, from, to, g);
          const got = await series(server, access, key, from, to, g);
          assert.deepEqual(got, want, `${key ?? 'system key'} ${g} ${from}..${to}`);
        }
      }
      const system = await series(
        server,
        access,
        null,
        '2024-03-31T00:00:00+01:00',
        '2024-03-31T00:00:00+01:00',
        '1d',
      );
      assert.deepEqual(system.values, [
        { count: 5, keys: { shop: 3, web: { 'eu::shop': 1 }, __untracked__: 1 } },
      ]);
    });
  }
});

// Per metric store, through the store interface (the write queue's and the series reader's calls):
//   writes  1,000 sequential apply() calls, each the write set of one point (3 leaves) as the engine
//           merges it: the key and the system key in 7 granularities (1m .. 1y), 14 buckets
//   reads   one read of a year of 1h buckets (8,760, 10 leaves each), median of 5
// Run: node --import tsx bench/drivers.ts [embedded|sqlite|postgres|mysql|redis|mongo ...]
// Servers as in the driver tests (test/drivers/network.ts); unreachable ones are skipped. mongo runs
// against CongoDB (in process, a stand-in that scans its collection on every upsert: its figures say
// nothing about a real MongoDB), and its year is inserted with the raw client for that reason.
import { MongoClient } from 'mongodb';
import { embeddedFactory, sqliteFactory, writeSet, type Factory, type Op } from '../test/drivers/helpers';
import {
  mongoFactory,
  mysqlFactory,
  postgresFactory,
  redisFactory,
  type NetworkFixture,
} from '../test/drivers/network-factories';

const GRANULARITIES: Array<[string, (ms: number) => number]> = [
  ['1m', (ms) => ms - (ms % 60_000)],
  ['1h', (ms) => ms - (ms % 3_600_000)],
  ['1d', (ms) => ms - (ms % 86_400_000)],
  ['1w', (ms) => ms - (ms % 86_400_000)],
  ['1mo', () => Date.UTC(2025, 2, 1)],
  ['1q', () => Date.UTC(2025, 0, 1)],
  ['1y', () => Date.UTC(2025, 0, 1)],
];
const T0 = Date.UTC(2025, 2, 4, 10);
const YEAR = Date.UTC(2025, 0, 1);
const HOURS = 8760;

const FACTORIES: Record<string, Factory> = {
  embedded: embeddedFactory,
  sqlite: sqliteFactory('full'),
  postgres: postgresFactory('full'),
  mysql: mysqlFactory('full'),
  redis: redisFactory,
  mongo: mongoFactory('full'),
};

function pointOps(i: number): Op[] {
  const at = T0 + i * 1000;
  const values: Record<string, number> = { count: 1, 'amount.net': 2.5, [`country.c${i % 5}`]: 1 };
  return GRANULARITIES.flatMap(([g, floor]): Op[] => [
    { key: 'bench', granularity: g, at: floor(at), add: values },
    { key: '__system__key__', granularity: g, at: floor(at), add: { count: 1, 'keys.bench': 1 } },
  ]);
}

const hour = (h: number) => YEAR + h * 3_600_000;
const leaves = (h: number) =>
  Object.fromEntries(Array.from({ length: 10 }, (_, l) => [`metrics.leaf${l}`, h + l]));

async function loadYear(name: string, fx: NetworkFixture): Promise<void> {
  if (name === 'mongo') {
    const client = new MongoClient(`mongodb://127.0.0.1:${fx.location.port}`);
    const docs = Array.from({ length: HOURS }, (_, h) => ({
      key: `year::1h::${hour(h) / 1000}`,
      data: { metrics: Object.fromEntries(Array.from({ length: 10 }, (_, l) => [`leaf${l}`, h + l])) },
    }));
    await client.db(fx.location.database).collection('trifle_stats').insertMany(docs);
    await client.close();
    return;
  }
  for (let start = 0; start < HOURS; start += 1000) {
    const ops = [];
    for (let h = start; h < Math.min(start + 1000, HOURS); h++)
      ops.push({ key: 'year', granularity: '1h', at: hour(h), add: leaves(h) });
    await fx.store.apply(writeSet(ops));
  }
}

async function bench(name: string, factory: Factory): Promise<void> {
  if (factory.skip) {
    console.log(`${name}: skipped (${factory.skip})`);
    return;
  }
  const fx = (await factory.create()) as NetworkFixture;
  try {
    await fx.store.setup();
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) await fx.store.apply(writeSet(pointOps(i)));
    const writeMs = performance.now() - t0;
    await loadYear(name, fx);
    const starts = Array.from({ length: HOURS }, (_, h) => hour(h));
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r0 = performance.now();
      const values = await fx.store.read({ sourceId: 's1', key: 'year', granularity: '1h' }, starts);
      times.push(performance.now() - r0);
      if (JSON.parse(values[HOURS - 1]!).metrics.leaf0 !== HOURS - 1)
        throw new Error(`${name}: the year read back wrong`);
    }
    const median = times.sort((a, b) => a - b)[2]!;
    console.log(
      `${name}: 1,000 writes ${writeMs.toFixed(0)} ms (${(writeMs / 1000).toFixed(2)} ms each, ${Math.round(1000 / (writeMs / 1000))}/s); ` +
        `year of 1h reads (8,760 buckets) median ${median.toFixed(0)} ms`,
    );
  } finally {
    await fx.dispose();
    await factory.finish?.();
  }
}

async function main(): Promise<void> {
  const chosen = process.argv.slice(2);
  const names = chosen.length > 0 ? chosen : Object.keys(FACTORIES);
  for (const name of names) {
    const factory = FACTORIES[name];
    if (!factory) throw new Error(`unknown store ${name}; one of ${Object.keys(FACTORIES).join(', ')}`);
    await bench(name, factory);
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

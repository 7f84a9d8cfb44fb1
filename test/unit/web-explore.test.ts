// Explore's key counts and CSV (web/lib/explore-data.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyCounts, seriesCsv } from '../../web/lib/explore-data';

test('key counts add up every bucket of the system key; nested keys follow the dots', () => {
  const system = {
    at: [0, 1],
    atText: ['2026-01-24T10:00:00Z', '2026-01-24T11:00:00Z'],
    values: [
      { count: 3, keys: { orders: 2, shop: { visits: 1 } } },
      { count: 4, keys: { orders: 4 } },
      {},
    ] as Record<string, unknown>[],
  };
  assert.deepEqual(keyCounts(system), {
    total: 7,
    keys: [
      { key: 'orders', count: 6 },
      { key: 'shop.visits', count: 1 },
    ],
  });
});

test('CSV: a header, one row per bucket, empty cells for missing values, quoted when needed', () => {
  const series = {
    at: [0, 1],
    atText: ['2026-01-24T10:00:00+01:00', '2026-01-24T11:00:00+01:00'],
    values: [{ count: 2, 'a,b': 1 }, {}] as Record<string, unknown>[],
  };
  assert.equal(
    seriesCsv(series, ['count', 'a,b']),
    'at,count,"a,b"\n2026-01-24T10:00:00+01:00,2,1\n2026-01-24T11:00:00+01:00,,\n',
  );
});

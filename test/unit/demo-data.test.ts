// The demo shop's generated data: deterministic, shaped like a shop's day and week, sparse like
// real tracking, with the month's incidents where docs/demo.md says they are.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { historyBatches } from '../../src/demo/history';
import { ZoneClock, incidentsBefore, ordersShape, trafficShape } from '../../src/demo/rhythm';
import {
  ALL_ORDERS_KEY,
  COUNTRIES,
  WEB_KEY,
  ordersKey,
  slotPoints,
  type Point,
  type ShopModel,
} from '../../src/demo/shop';
import { demoDataDir, localUrl, prepareDemo } from '../../src/demo/run';
import { loadConfig } from '../../src/config';
import { DemoError } from '../../src/demo/setup';
import { parseArgs } from '../../src/cli';

const NOW = Date.parse('2026-11-20T15:42:17Z');
const clock = new ZoneClock('Europe/Bratislava');
const model: ShopModel = { seed: 42, clock, now: NOW, incidents: incidentsBefore(clock, NOW) };
const HOUR = 3_600_000;

function pointsOf(from: number, to: number): Point[] {
  return [...historyBatches(model, from, to)].flat();
}
const sum = (points: Point[], key: string, pick: (v: any) => number | undefined) =>
  points.filter((p) => p.key === key && !p.operation).reduce((s, p) => s + (pick(p.values) ?? 0), 0);

describe('demo shop data', () => {
  test('the same seed and slot give the same points; another seed gives others', () => {
    const slot = NOW - 5 * HOUR;
    assert.deepEqual(slotPoints(model, slot, 60), slotPoints(model, slot, 60));
    assert.notDeepEqual(slotPoints({ ...model, seed: 43 }, slot, 60), slotPoints(model, slot, 60));
  });

  test('local rhythm: evenings are busier than nights, in the shop time zone', () => {
    const local = clock.local(Date.parse('2026-11-20T19:30:00Z'));
    assert.deepEqual(local, { hour: 20.5, weekday: 4 });
    assert.ok(trafficShape(20.5, 2) > 5 * trafficShape(4, 2));
    assert.ok(ordersShape(21, 6) > ordersShape(21, 5), 'Sunday evenings sell more than Saturdays');
    const night = sum(
      pointsOf(Date.parse('2026-11-19T02:00:00Z'), Date.parse('2026-11-19T03:00:00Z')),
      WEB_KEY,
      (v) => v.requests?.count,
    );
    const evening = sum(
      pointsOf(Date.parse('2026-11-19T19:00:00Z'), Date.parse('2026-11-19T20:00:00Z')),
      WEB_KEY,
      (v) => v.requests?.count,
    );
    assert.ok(evening > 4 * night, `evening ${evening} vs night ${night}`);
  });

  test('values are sparse (no zero leaves) and all orders are the sum of the countries', () => {
    const points = pointsOf(NOW - 6 * HOUR, NOW);
    const zero = (node: unknown): boolean =>
      node === 0 || (typeof node === 'object' && node !== null && Object.values(node).some(zero));
    // Counters track what happened; gauges (assert) are readings, where 0 is a value.
    assert.ok(points.every((p) => p.operation === 'assert' || !zero(p.values)));
    const count = (key: string) => sum(points, key, (v) => v.orders?.count);
    const countries = COUNTRIES.reduce((s, c) => s + count(ordersKey(c.code)), 0);
    assert.ok(countries > 100);
    assert.equal(count(ALL_ORDERS_KEY), countries);
    assert.equal(
      sum(points, ALL_ORDERS_KEY, (v) =>
        Object.values(v.country ?? {}).reduce((a: number, b: any) => a + b, 0),
      ),
      countries,
    );
  });

  test('the failover nine days ago answers 503s and slows the site down', () => {
    const failover = model.incidents.find((i) => i.name === 'database failover')!;
    const during = pointsOf(failover.from, failover.to);
    const before = pointsOf(failover.from - 7 * 86_400_000, failover.to - 7 * 86_400_000);
    const unavailable = (points: Point[]) => sum(points, WEB_KEY, (v) => v.requests?.status?.['503']);
    const latency = (points: Point[]) =>
      sum(points, WEB_KEY, (v) => v.latency?.sum) / sum(points, WEB_KEY, (v) => v.latency?.count);
    assert.ok(unavailable(during) > 50 * Math.max(1, unavailable(before)));
    assert.ok(latency(during) > 2 * latency(before));
  });

  test('minute slots for the last two days, then five minutes for a week, then quarter hours; the last slot ends at now', () => {
    const stamps = (from: number, to: number) => [...new Set(pointsOf(from, to).map((p) => p.at))];
    const hourAgo3d = Date.parse('2026-11-17T10:00:00Z');
    assert.equal(stamps(hourAgo3d, hourAgo3d + HOUR).length, 12);
    const hourAgo9d = Date.parse('2026-11-11T10:00:00Z');
    assert.equal(stamps(hourAgo9d, hourAgo9d + HOUR).length, 4);
    assert.equal(stamps(NOW - HOUR, NOW).length, 61, 'a partial first and last minute');
    assert.ok(pointsOf(NOW - 30 * 86_400_000, NOW).every((p) => Date.parse(p.at) < NOW));
  });
});

describe('demo command', () => {
  test('`service demo` parses with the usual flags', () => {
    assert.deepEqual(parseArgs(['demo', '--port', '0', '--data', 'x']), {
      command: 'demo',
      flags: { 'server.port': '0', 'storage.data_dir': 'x' },
    });
  });

  test('the banner names an address a browser can open, also when listening on every interface', () => {
    assert.equal(localUrl('http://0.0.0.0:4000'), 'http://127.0.0.1:4000');
    assert.equal(localUrl('http://[::]:4000'), 'http://[::1]:4000');
    assert.equal(localUrl('http://192.168.1.5:4000'), 'http://192.168.1.5:4000');
  });

  test("the demo's settings win over the environment's, except an explicit log level", () => {
    const flags: Record<string, string> = { 'server.port': '0' };
    const data = prepareDemo(flags, false);
    try {
      const env = {
        SERVICE_PROJECTS_ENABLED: 'false',
        SERVICE_REGISTRATION_ENABLED: 'no',
        SERVICE_DATA_DIR: '/var/lib/real',
      };
      const config = loadConfig({ flags, env, cwd: data.dir });
      assert.equal(config.storage.dataDir, data.dir);
      assert.deepEqual(config.features, { projectsEnabled: true, registrationEnabled: true });
      assert.equal(config.log.level, 'warn');
      const own: Record<string, string> = { 'storage.data_dir': path.join(data.dir, 'kept') };
      assert.equal(prepareDemo(own, true).temporary, false);
      assert.equal(own['log.level'], undefined, 'SERVICE_LOG_LEVEL decides');
    } finally {
      rmSync(data.dir, { recursive: true, force: true });
    }
  });

  test('the data directory: a new temp folder, or an empty one; never an installation', () => {
    const temp = demoDataDir(undefined);
    assert.equal(temp.temporary, true);
    rmSync(temp.dir, { recursive: true });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'demo-dir-'));
    try {
      assert.deepEqual(demoDataDir(dir), { dir, temporary: false });
      writeFileSync(path.join(dir, 'service.db'), '');
      assert.throws(
        () => demoDataDir(dir),
        (err: Error) => err instanceof DemoError && /already holds a service database/.test(err.message),
      );
      rmSync(path.join(dir, 'service.db'));
      writeFileSync(path.join(dir, 'notes.txt'), 'mine');
      assert.throws(() => demoDataDir(dir), /is not empty/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

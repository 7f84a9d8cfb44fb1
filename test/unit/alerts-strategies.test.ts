// The alert strategies as pure functions on crafted series (SPEC 13): missing buckets, "treat
// missing as zero", a DST day in the source's zone, and a key pattern with a named group read per
// matching key through the round reader.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { runRule, parseRuleSettings, type RuleSettings } from '../../src/domain/alerts/strategies';
import { compileMonitor, keyPatternRegExp, matchKey } from '../../src/domain/alerts/plan';
import { KeyMatches, RoundReader, windowOf } from '../../src/domain/alerts/reader';
import { Pacer } from '../../src/domain/alerts/pace';
import { parseGranularity } from '../../src/model/time/granularity';
import type { Monitor } from '../../src/model/monitor';
import type { Source } from '../../src/domain/types';

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const series = (values: (number | null)[], stepMs = MIN) => ({
  at: values.map((_, i) => T0 + i * stepMs),
  end: T0 + values.length * stepMs,
  values,
});
function settings(strategy: RuleSettings['strategy'], raw: Record<string, unknown>): RuleSettings {
  const problems: string[] = [];
  const s = parseRuleSettings(strategy, raw, 's', { add: (f, m) => problems.push(`${f} ${m}`) });
  assert.ok(s, problems.join('; '));
  return s;
}
const violating = (values: (number | null)[], s: RuleSettings) =>
  runRule(series(values), s)
    .result.violating.map((v) => (v ? 1 : 0))
    .join('');

describe('threshold and range', () => {
  test('threshold above/below; missing buckets never violate; the latest bucket with a value is judged', () => {
    const above = settings('threshold', { direction: 'above', value: 90 });
    assert.equal(violating([10, 95, null, 91, 50], above), '01010');
    const out = runRule(series([10, 95, null, 91, null]), above);
    assert.deepEqual([out.firing, out.value, out.at], [true, 91, T0 + 3 * MIN]);
    assert.deepEqual(out.firedAt, [T0 + MIN, T0 + 3 * MIN]);
    assert.deepEqual(out.result.upper, [90, 90, 90, 90, 90]);
    const below = settings('threshold', { threshold_direction: 'below', threshold_value: '5' });
    assert.equal(violating([10, 4, null, 6], below), '0100');
    const none = runRule(series([null, null]), above);
    assert.deepEqual([none.firing, none.at, none.value], [false, null, null]);
  });

  test('treat missing as zero: a gap counts as 0 (either spelling of the flag)', () => {
    const below = settings('threshold', { direction: 'below', value: 1, treat_missing_as_zero: true });
    assert.equal(violating([5, null, 5, null], below), '0101');
    assert.equal(runRule(series([5, null]), below).firing, true, 'the last bucket is judged, as 0');
    const trifle = settings('threshold', {
      threshold_direction: 'below',
      threshold_value: 1,
      treat_nil_as_zero: true,
    });
    assert.equal(violating([5, null], trifle), '01');
  });

  test('range: outside min..max, both ends inside; bands', () => {
    const r = settings('range', { min: 10, max: 20 });
    assert.equal(violating([10, 20, 9.9, 20.1, null, 15], r), '001100');
    const out = runRule(series([15]), r);
    assert.deepEqual([out.result.lower, out.result.upper], [[10], [20]]);
  });
});

describe('hampel and cusum', () => {
  test('hampel flags a spike against the rolling median and not the steady values around it', () => {
    const h = settings('hampel', { hampel_window_size: 5, hampel_k: 3, hampel_mad_floor: 1 });
    const values = [10, 11, 10, 12, 11, 10, 50, 11, null, 10];
    assert.equal(violating(values, h), '0000001000');
    const out = runRule(series(values), h);
    assert.equal(out.result.upper![0], null, 'no band before 3 values');
    assert.ok(out.result.upper![6]! < 50 && out.result.lower![6]! > 0);
  });

  test('hampel: the MAD floor keeps a flat series from flagging tiny moves', () => {
    const flat = [5, 5, 5, 5, 5, 5.1];
    assert.equal(violating(flat, settings('hampel', { window: 5, k: 3, floor: 0 })), '000001');
    assert.equal(violating(flat, settings('hampel', { window: 5, k: 3, floor: 1 })), '000000');
  });

  test('cusum finds a drift of the mean that no single value would cross', () => {
    const c = settings('cusum', { cusum_k: 0.5, cusum_h: 3 });
    const steady = [10, 11, 9, 10, 11, 9, 10, 11, 9, 10];
    assert.equal(violating(steady, c), '0000000000');
    const drift = [10, 11, 9, 10, 11, 9, 12, 13, 13, 14, 14, 15, 15];
    const out = runRule(series(drift), c);
    assert.equal(out.firing, true);
    assert.ok(out.firedAt.length >= 1 && out.firedAt[0]! >= T0 + 6 * MIN, 'fires once the drift has lasted');
    assert.equal(runRule(series([null, 3]), c).firing, false, 'fewer than 2 values: nothing to judge');
  });
});

describe('absence and change', () => {
  test('absence: no value for the period (measured in time); missing buckets stay missing with treat_missing_as_zero', () => {
    const a = settings('absence', { period: '3m', treat_missing_as_zero: true });
    assert.equal(violating([1, null, null, null, null, 2, null], a), '0001100');
    const quiet = runRule(series([1, 1, null, null, null]), a);
    assert.equal(quiet.firing, true, 'the last bucket is judged even though it is empty');
    assert.equal(violating([null, null], a), '00', 'a period reaching before the window is not judged');
  });

  test('absence across a DST day: a 23-hour day is 23 hours', () => {
    const zone = 'Europe/Berlin';
    const source = { timeZone: zone, beginningOfWeek: 1 } as Source;
    const g = parseGranularity('1d')!;
    // 2026-03-30 10:00 in Berlin (UTC+2): the completed daily buckets of the last 3 days.
    const now = Date.UTC(2026, 2, 30, 8);
    const w = windowOf(source, g, now - 3 * 86_400_000, now);
    const hours = w.bucketsMs.map((start, i) => ((w.bucketsMs[i + 1] ?? w.endMs) - start) / 3_600_000);
    assert.deepEqual(hours, [24, 24, 23], 'March 29 has 23 hours in Berlin');
    assert.equal(w.endMs, Date.UTC(2026, 2, 29, 22), 'the bucket being filled starts at local midnight');
    const s = { at: w.bucketsMs, end: w.endMs, values: [5, 5, null] };
    assert.equal(
      runRule(s, settings('absence', { period: '23h' })).firing,
      true,
      'no data for the whole 23-hour day',
    );
    assert.equal(
      runRule(s, settings('absence', { period: '24h' })).firing,
      false,
      '24 hours back reaches into March 28, which has data',
    );
  });

  test('change: percent against the previous window, by direction and window', () => {
    const up = settings('change', { percent: 50, direction: 'up' });
    assert.equal(violating([10, 10, 16, 8, 4], up), '00100');
    const down = settings('change', { percent: 50, direction: 'down' });
    assert.equal(violating([10, 10, 16, 8, 4], down), '00011');
    const any = settings('change', { percent: 50 });
    assert.equal(violating([10, 0, 10, null, 10], any), '01000', 'a zero or missing baseline judges nothing');
    const w2 = settings('change', { percent: 100, window: 2 });
    assert.equal(violating([1, 1, 2, 2, 2, 2], w2), '000100');
    const out = runRule(series([10, 20]), settings('change', { percent: 50 }));
    assert.deepEqual([out.result.upper![1], out.result.lower![1]], [15, 5]);
  });
});

describe('key patterns with named groups', () => {
  test('the pattern matches whole keys; named groups become labels', () => {
    const re = keyPatternRegExp('cpu,host=(?<host>[^,]+)');
    assert.deepEqual(matchKey(re, 'cpu,host=pve1'), { host: 'pve1' });
    assert.equal(matchKey(re, 'cpu,host=pve1,rack=2'), null);
    assert.equal(matchKey(re, 'xcpu,host=pve1'), null);
    assert.deepEqual(matchKey(keyPatternRegExp('^cpu,host=(?<host>[^,]+)'), 'cpu,host=a,rack=2'), {
      host: 'a',
    });
  });

  test('a monitor on a pattern is read per matching key, with the keys from the system key', async () => {
    const source = {
      id: 's1',
      timeZone: 'UTC',
      beginningOfWeek: 1,
      granularities: ['1m', '1h'],
      defaultTimeframe: '1h',
      defaultGranularity: '1m',
    } as Source;
    const monitor = {
      type: 'alert',
      alertMetricKey: 'cpu,host=(?<host>[^,]+)',
      alertMetricPath: 'load',
      alertSeries: [],
      alertTimeframe: '5m',
      alertGranularity: '1m',
      alerts: [{ id: 'r1', analysis_strategy: 'threshold', settings: { value: 90 } }],
    } as unknown as Monitor;
    const problems: string[] = [];
    const plan = compileMonitor(monitor, source, { add: (f, m) => problems.push(`${f} ${m}`) });
    assert.ok(plan, problems.join('; '));
    const reads: string[] = [];
    const byKey: Record<string, (number | null)[]> = {
      'cpu,host=a': [50, 60, 70, 80, 95],
      'cpu,host=b': [10, null, 10, 10, 10],
    };
    const reader = new RoundReader({
      async readSeries(_source, params) {
        reads.push(params.key);
        const n = params.range.bucketsMs.length;
        if (params.key === '__system__key__') {
          const bucket = JSON.stringify({
            count: 4,
            keys: { 'cpu,host=a': 1, 'cpu,host=b': 2, 'mem,host=a': 1 },
          });
          return { at: [], values: Array.from({ length: n }, () => bucket) };
        }
        const values = byKey[params.key] ?? [];
        return {
          at: [],
          values: Array.from({ length: n }, (_, i) =>
            values[i] == null ? '{}' : JSON.stringify({ load: values[i] }),
          ),
        };
      },
    });
    const now = T0 + 5 * MIN + 30_000;
    const w = windowOf(source, plan.granularity, now - plan.timeframeMs, now);
    assert.equal(w.bucketsMs.length, 5, 'the bucket being filled is left out');
    const keys = await reader.keys(source, plan, w);
    assert.deepEqual(keys, [
      { key: 'cpu,host=a', labels: { host: 'a' } },
      { key: 'cpu,host=b', labels: { host: 'b' } },
    ]);
    const outcomes = [];
    for (const { key } of keys) {
      const values = await reader.series(source, plan, key, w);
      outcomes.push([
        key,
        runRule({ at: w.bucketsMs, end: w.endMs, values }, plan.rules[0]!.settings).firing,
      ]);
    }
    assert.deepEqual(outcomes, [
      ['cpu,host=a', true],
      ['cpu,host=b', false],
    ]);
    await reader.keys(source, plan, w);
    assert.equal(
      reads.filter((k) => k === '__system__key__').length,
      w.bucketsMs.length,
      'the system key read once per window and round (a bucket at a time)',
    );
  });

  test('a pattern is matched again only when the window holds other keys than the last round', () => {
    const matches = new KeyMatches();
    let runs = 0;
    const pattern = keyPatternRegExp('cpu,host=(?<host>[^,]+)');
    const exec = pattern.exec.bind(pattern);
    pattern.exec = (text: string) => {
      runs += 1;
      return exec(text);
    };
    const round = (keys: string[]) => {
      const list = matches.intern('s 1m 10', keys);
      const found = matches.match(pattern, list);
      matches.endRound();
      return found;
    };
    const first = round(['cpu,host=a', 'cpu,host=b', 'mem,host=a']);
    assert.deepEqual(first, [
      { key: 'cpu,host=a', labels: { host: 'a' } },
      { key: 'cpu,host=b', labels: { host: 'b' } },
    ]);
    assert.equal(runs, 3);
    // the same keys (a new array from the next round's read): the last matching, no run
    assert.equal(round(['cpu,host=a', 'cpu,host=b', 'mem,host=a']), first);
    assert.equal(runs, 3);
    // a new key: matched afresh, the new instance found
    assert.deepEqual(
      round(['cpu,host=a', 'cpu,host=b', 'cpu,host=c', 'mem,host=a']).map((m) => m.key),
      ['cpu,host=a', 'cpu,host=b', 'cpu,host=c'],
    );
    assert.equal(runs, 7);
    // a key gone from the window: its instance is no longer matched
    assert.deepEqual(
      round(['cpu,host=b', 'cpu,host=c']).map((m) => m.key),
      ['cpu,host=b', 'cpu,host=c'],
    );
    assert.equal(runs, 9);
  });

  test('a round paces itself: turns of about 2 ms, each followed by a pause on a timer', async () => {
    const pacer = new Pacer(2, 3);
    let timerRan = false;
    const timer = setTimeout(() => (timerRan = true), 1);
    const started = performance.now();
    while (performance.now() - started < 3); // a turn longer than 2 ms
    await pacer.turn();
    // the pause is a timer: a timer due meanwhile has run (as I/O callbacks waiting do)
    assert.ok(timerRan, 'the pause let a timer due meanwhile run');
    clearTimeout(timer);
    assert.equal(pacer.pauses, 1);
    assert.ok(pacer.longestMs >= 3, `longest turn ${pacer.longestMs}`);
    await pacer.turn(); // the next turn has just begun: no pause
    assert.equal(pacer.pauses, 1);
  });

  test('series rows: the last visible row is watched, expressions over earlier rows', async () => {
    const source = { id: 's', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m'] } as Source;
    const monitor = {
      type: 'alert',
      alertMetricKey: 'http',
      alertMetricPath: null,
      alertSeries: [
        { kind: 'path', path: 'errors', visible: false },
        { kind: 'path', path: 'requests', visible: false },
        { kind: 'expression', expression: 'a / b * 100', visible: true },
      ],
      alertTimeframe: '2m',
      alertGranularity: '1m',
      alerts: [{ id: 'r', analysis_strategy: 'threshold', settings: { value: 5 } }],
    } as unknown as Monitor;
    const plan = compileMonitor(monitor, source, { add: (f, m) => assert.fail(`${f} ${m}`) })!;
    const reader = new RoundReader({
      async readSeries() {
        return { at: [], values: ['{"errors":1,"requests":100}', '{"errors":10,"requests":100}'] };
      },
    });
    const w = windowOf(source, plan.granularity, T0, T0 + 2 * MIN);
    assert.deepEqual(await reader.series(source, plan, 'http', w), [1, 10]);
  });
});

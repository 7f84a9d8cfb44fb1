// The interface's view state in the URL (web/lib/view.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fitGranularity,
  parseView,
  rangeParams,
  resolveRange,
  shiftView,
  spanMs,
  viewParams,
} from '../../web/lib/view';

test('a view survives its URL form', () => {
  const query = new URLSearchParams(
    'from=2026-01-24T10:00:00Z&to=2026-01-24T16:00:00Z&g=1h&refresh=30s&s.country=SK',
  );
  const view = parseView(query);
  assert.deepEqual(view, {
    preset: null,
    from: Date.parse('2026-01-24T10:00:00Z'),
    to: Date.parse('2026-01-24T16:00:00Z'),
    granularity: '1h',
    refresh: '30s',
    segments: { country: 'SK' },
  });
  const params = viewParams(view);
  assert.equal(params.from, '2026-01-24T10:00:00Z');
  assert.deepEqual(
    parseView(new URLSearchParams(Object.entries(params).filter(([, v]) => v) as [string, string][])),
    view,
  );
});

test('presets end now; back and forward move by the window span', () => {
  const now = Date.parse('2026-01-24T12:00:00Z');
  const view = parseView(new URLSearchParams('range=6h'));
  assert.deepEqual(resolveRange(view, now, '24h'), { from: now - 6 * 3600_000, to: now });
  const back = shiftView(view, -1, now, '24h');
  assert.equal(back.preset, null);
  assert.deepEqual([back.from, back.to], [now - 12 * 3600_000, now - 6 * 3600_000]);
  const forward = shiftView(back, 1, now, '24h');
  assert.deepEqual([forward.from, forward.to], [now - 6 * 3600_000, now]);
  assert.equal(parseView(new URLSearchParams('range=bogus&refresh=2s')).preset, null);
  assert.equal(parseView(new URLSearchParams('refresh=2s')).refresh, 'off');
});

test('the granularity gives way to a coarser allowed one when the range holds too many buckets', () => {
  const allowed = ['1m', '1h', '1d', '1w'];
  assert.equal(fitGranularity(allowed, '1m', spanMs('24h')!), '1m');
  assert.equal(fitGranularity(allowed, '1m', spanMs('7d')!), '1h');
  assert.equal(fitGranularity(allowed, '1h', spanMs('1y')!), '1d');
  assert.equal(
    fitGranularity(allowed, '5m', spanMs('1h')!),
    '1m',
    'a granularity the source does not allow is replaced',
  );
});

test('a link to the same data keeps the range and granularity, nothing else', () => {
  assert.deepEqual(rangeParams('?range=7d&g=1h&refresh=30s&s.country=SK&kiosk'), { range: '7d', g: '1h' });
  assert.deepEqual(rangeParams('?from=2026-01-24T10:00:00Z&to=2026-01-25T10:00:00Z'), {
    from: '2026-01-24T10:00:00Z',
    to: '2026-01-25T10:00:00Z',
  });
  assert.deepEqual(rangeParams(''), {});
});

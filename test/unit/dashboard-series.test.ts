// Trifle's `series` widget form (SPEC 6): rows of paths and expressions over earlier rows, accepted
// instead of (or beside) `path`/`paths`, and refused with the row's field named when unusable.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorBag } from '../../src/domain/dashboards/issues';
import { normalizePayload } from '../../src/domain/dashboards/widgets';
import { expressionProblem } from '../../src/domain/dashboards/series-rows';

function check(grid: unknown[]) {
  const bag = new ErrorBag();
  const output = normalizePayload({ grid }, bag);
  return { widgets: (output.grid ?? []) as Record<string, unknown>[], errors: bag.fields };
}

const path = (p: string) => ({ kind: 'path', path: p });
const expression = (e: string) => ({ kind: 'expression', expression: e, label: 'x' });

describe('series rows', () => {
  test('a metric widget may carry series rows instead of path or paths', () => {
    const series = [path('latency.sum'), path('latency.count'), expression('a / b')];
    const { widgets, errors } = check([
      { id: 'k', type: 'kpi', series },
      { id: 't', type: 'timeseries', series, chart_type: 'dots', normalized: true },
      { id: 'c', type: 'category', series: [path('country.*')] },
      { id: 'tb', type: 'table', series },
      { id: 'l', type: 'list', series: [path('channel.*')], sort: 'alpha_desc' },
      { id: 'd', type: 'distribution', series: [path('duration')] },
      { id: 'h', type: 'heatmap', series: [path('duration')] },
    ]);
    assert.deepEqual(errors, {});
    assert.equal(widgets[0]!.function, 'mean', 'kpi function defaults to mean');
    assert.deepEqual(widgets[1]!.series, series, 'rows are kept as sent');
  });

  test('both forms together are accepted (what the demo sends)', () => {
    const { errors } = check([{ id: 'k', type: 'kpi', path: 'a', function: 'sum', series: [path('a'), path('b'), expression('a / b')] }]);
    assert.deepEqual(errors, {});
  });

  test('neither form: the path field is required; an empty series does not count', () => {
    assert.deepEqual(check([{ id: 'k', type: 'kpi', series: [] }]).errors, { 'payload.grid[k].path': ['is required'] });
    assert.deepEqual(check([{ id: 't', type: 'timeseries' }]).errors, { 'payload.grid[t].paths': ['is required'] });
  });

  test('broken rows are named by widget and position', () => {
    const { errors } = check([
      {
        id: 'ts',
        type: 'timeseries',
        series: [path('a.*.b'), { kind: 'path' }, { kind: 'formula' }, { kind: 'expression' }, expression('a + e'), 'row', { ...path('a'), visible: 'yes' }],
      },
      { id: 'k', type: 'kpi', series: { a: 1 } },
    ]);
    assert.deepEqual(errors, {
      'payload.grid[ts].series[0].path': ['must be a dot path such as count or country.US; only a final .* wildcard is allowed'],
      'payload.grid[ts].series[1].path': ['is required'],
      'payload.grid[ts].series[2].kind': ['must be one of path, expression'],
      'payload.grid[ts].series[3].expression': ['is required'],
      'payload.grid[ts].series[4].expression': ['may only name earlier rows (a..d) and the functions sum, mean, avg, min, max, sqrt; found "e"'],
      'payload.grid[ts].series[5]': ['must be a series row object'],
      'payload.grid[ts].series[6].visible': ['must be true or false'],
      'payload.grid[k].series': ['must be a list of series rows'],
    });
  });
});

describe('expressions', () => {
  test('operators, parentheses, numbers, signs and the functions over earlier rows', () => {
    for (const e of ['a / b', 'b / a * 100', '(a + b) / 2', '-a + 1.5', 'a * -b', 'max(a - b, 0) / sqrt(max(a, 1))', 'SUM(a, b)', 'avg(a,b,c)', '.5 * a']) {
      assert.equal(expressionProblem(e, 3), null, e);
    }
  });

  test('what cannot be evaluated is refused with a reason', () => {
    const cases: Array<[string, number, string]> = [
      ['', 2, 'must not be empty'],
      ['a b', 2, 'needs an operator before "b"'],
      ['a +', 2, 'ends without an operand'],
      ['(a + b', 2, 'has an unclosed "("'],
      ['a + b)', 2, 'has an unbalanced or empty ")"'],
      ['a ^ 2', 2, 'cannot be read at "^ 2"'],
      ['c', 2, 'may only name earlier rows (a..b) and the functions sum, mean, avg, min, max, sqrt; found "c"'],
      ['a', 0, 'may only name earlier rows (none yet) and the functions sum, mean, avg, min, max, sqrt; found "a"'],
      ['sqrt a', 1, 'must call sqrt with parentheses'],
      ['a, b', 2, 'has a "," outside a function call'],
      ['* a', 1, 'has "*" without a left operand'],
      ['x'.repeat(1001), 1, 'must be at most 1000 characters'],
    ];
    for (const [e, rows, problem] of cases) assert.equal(expressionProblem(e, rows), problem, e);
  });
});

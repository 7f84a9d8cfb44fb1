// Property tests: no text, widget or series makes the expression parser, the server's widget check
// or the widgets' data functions throw (a throw would be a 500 on the server, a broken cell in the UI).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { expressionProblem, evaluate, parseExpression } from '../../src/shared/expression';
import { ErrorBag } from '../../src/domain/dashboards/issues';
import { normalizePayload } from '../../src/domain/dashboards/widgets';
import { widgetTimeline, widgetTotals } from '../../web/widgets/data/series';
import { kpiFigures } from '../../web/widgets/data/kpi';
import type { SeriesData } from '../../web/widgets/types';

const exprText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc
    .array(
      fc.constantFrom(
        'a',
        'b',
        'c',
        '1',
        '2.5',
        '+',
        '-',
        '*',
        '/',
        '(',
        ')',
        ',',
        'sum(',
        'max(',
        'sqrt(',
        ' ',
      ),
      { maxLength: 30 },
    )
    .map((p) => p.join('')),
);

const widgetLike = fc.record(
  {
    id: fc.oneof(fc.string(), fc.integer()),
    type: fc.constantFrom(
      'kpi',
      'timeseries',
      'category',
      'table',
      'list',
      'distribution',
      'heatmap',
      'group',
      'text',
      'x',
    ),
    path: fc.oneof(fc.string(), fc.constant('count'), fc.constant('a.*'), fc.constant(null)),
    paths: fc.oneof(fc.array(fc.oneof(fc.string(), fc.constant('a.*'), fc.integer())), fc.string()),
    series: fc.oneof(
      fc.array(
        fc.oneof(
          fc.constant(null),
          fc.record(
            {
              kind: fc.constantFrom('path', 'expression', 'x', 1),
              path: fc.oneof(fc.string(), fc.constant('a.*')),
              expression: exprText,
              visible: fc.anything(),
            },
            { requiredKeys: [] },
          ),
        ),
      ),
      fc.anything(),
    ),
    function: fc.constantFrom('sum', 'mean', 'min', 'max', 'avg', 3),
    subtype: fc.constantFrom('number', 'split', 'goal', null),
    goal_target: fc.anything(),
    limit: fc.anything(),
    sort: fc.anything(),
    children: fc.anything(),
  },
  { requiredKeys: [] },
);

const seriesLike = fc
  .array(
    fc.dictionary(
      fc.constantFrom('count', 'a', 'b.c', 'x'),
      fc.oneof(
        fc.double(),
        fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.double(), fc.string())),
        fc.string(),
      ),
    ),
    { maxLength: 6 },
  )
  .map((values): SeriesData => ({
    at: values.map((_, i) => i * 3_600_000),
    atText: values.map((_, i) => `t${i}`),
    values: values as Record<string, unknown>[],
  }));

describe('never throws', () => {
  test('expressions: parse or refuse with a message; evaluate to a finite number or null', () => {
    fc.assert(
      fc.property(
        exprText,
        fc.array(fc.oneof(fc.double(), fc.constant(null)), { minLength: 3, maxLength: 3 }),
        (text, [a, b, c]) => {
          const problem = expressionProblem(text, 3);
          if (problem !== null) return assert.equal(typeof problem, 'string');
          const value = evaluate(parseExpression(text, 3), { a, b, c });
          assert.ok(value === null || Number.isFinite(value));
        },
      ),
      { numRuns: 500 },
    );
  });

  test('the server check answers with errors, never an exception', () => {
    fc.assert(
      fc.property(fc.array(widgetLike, { maxLength: 4 }), (grid) => {
        normalizePayload({ grid }, new ErrorBag());
      }),
      { numRuns: 300 },
    );
  });

  test('the widgets compute something for any widget and series', () => {
    fc.assert(
      fc.property(widgetLike, seriesLike, (widget, series) => {
        widgetTimeline(widget, series);
        widgetTotals(widget, series);
        kpiFigures(widget, series, series);
      }),
      { numRuns: 300 },
    );
  });
});

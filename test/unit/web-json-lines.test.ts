// The JSON editor's field-to-line map (web/lib/json-lines.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lineOfField, prettyWithLines } from '../../web/lib/json-lines';

const doc = {
  payload: {
    grid: [
      { id: 'w1', type: 'kpi', path: 'count' },
      { id: 'w2', type: 'table', paths: ['a', 'b'] },
    ],
  },
  segments: [{ name: 'country', groups: [{ label: 'All', items: [{ value: 'SK' }] }] }],
};

test('the text is JSON.stringify with two spaces', () => {
  assert.equal(prettyWithLines(doc).text, JSON.stringify(doc, null, 2));
  assert.equal(prettyWithLines({ a: [], b: {} }).text, JSON.stringify({ a: [], b: {} }, null, 2));
});

test('fields are found by the server’s names: widget ids, indexes, nested keys', () => {
  const { text, lines } = prettyWithLines(doc);
  const lineText = (field: string) => text.split('\n')[lineOfField(lines, field)! - 1]!.trim();
  assert.equal(lineText('payload.grid[w1].path'), '"path": "count"');
  assert.equal(lineText('payload.grid[1].paths'), '"paths": [');
  assert.equal(lineText('payload.grid[w2].paths[1]'), '"b"');
  assert.equal(lineText('segments[0].groups[0].items[0].value'), '"value": "SK"');
  assert.equal(lineText('payload.grid[w1].function'), '{', 'a missing field points at its widget');
  assert.equal(lineOfField(lines, 'name'), null);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shortNames } from '../../web/widgets/data/names';
import type { Entry } from '../../web/widgets/data/rows';

const e = (name: string, source = name): Entry => ({ binding: '', name, source, values: [1], color: null });

test('a shared dotted prefix is cut from path-named entries and returned once', () => {
  const out = shortNames([e('requests.status.200'), e('requests.status.201'), e('requests.status.503')]);
  assert.equal(out.prefix, 'requests.status.');
  assert.deepEqual(
    out.entries.map((x) => x.name),
    ['200', '201', '503'],
  );
  assert.deepEqual(
    out.entries.map((x) => x.source),
    ['requests.status.200', 'requests.status.201', 'requests.status.503'],
  );
});

test('labels and expressions keep their names; a single path or no common prefix is left alone', () => {
  const out = shortNames([
    e('requests.api'),
    e('requests.web'),
    e('API per order', 'requests.api'),
    e('a', 'a / b'),
  ]);
  assert.equal(out.prefix, 'requests.');
  assert.deepEqual(
    out.entries.map((x) => x.name),
    ['api', 'web', 'API per order', 'a'],
  );
  assert.equal(shortNames([e('requests.api'), e('ratio', 'a / b')]).prefix, '');
  assert.equal(shortNames([e('requests.api'), e('errors.api')]).prefix, '');
});

test('every entry keeps at least its last segment; prefixes stop at whole segments', () => {
  const out = shortNames([e('a.b'), e('a.b.c')]);
  assert.equal(out.prefix, 'a.');
  assert.deepEqual(
    out.entries.map((x) => x.name),
    ['b', 'b.c'],
  );
  assert.equal(shortNames([e('req.one'), e('request.two')]).prefix, '');
});

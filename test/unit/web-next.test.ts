// Sign-in's `?next=` (web/lib/next.ts): only a path of this site; anything else returns to `/`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { safeNext } from '../../web/lib/next';

const ORIGIN = 'http://127.0.0.1:4000';

describe('sign-in next', () => {
  test('paths of this site are kept, with their query and hash', () => {
    assert.equal(safeNext('/sources', ORIGIN), '/sources');
    assert.equal(safeNext('/d/abc?range=24h&s.country=SK#w', ORIGIN), '/d/abc?range=24h&s.country=SK#w');
    assert.equal(safeNext('/', ORIGIN), '/');
  });

  test('another host, a scheme, a backslash or a control character goes to /', () => {
    for (const next of [
      null,
      '',
      'sources',
      '//evil.example',
      '/\\evil.example',
      '/\\/evil.example',
      '\\\\evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      '/\t/evil.example',
      '/\n/evil.example',
      '/a\\b',
      ' /sources',
    ]) {
      assert.equal(safeNext(next, ORIGIN), '/', JSON.stringify(next));
    }
  });
});

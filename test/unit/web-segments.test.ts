// The interface's segment substitution (web/lib/segments.ts): values replace the key's capture groups.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureGroups, hasSegments, substituteKey } from '../../web/lib/segments';

test('a named group takes the value of the segment with its name', () => {
  assert.equal(
    substituteKey('shop::(?<country>[^:]+)::orders', ['country'], { country: 'SK' }),
    'shop::SK::orders',
  );
});

test('unnamed groups take the remaining segments in order', () => {
  const key = 'shop::(?<country>[^:]+)::([^:]+)::([a-z]+)';
  const values = { device: 'mobile', country: 'SK', channel: 'ads' };
  assert.equal(substituteKey(key, ['device', 'country', 'channel'], values), 'shop::SK::mobile::ads');
});

test('a group without a value stays as written; keys without groups pass unchanged', () => {
  assert.equal(substituteKey('a::(?<x>\\w+)::(?<y>\\w+)', ['x', 'y'], { x: '1' }), 'a::1::(?<y>\\w+)');
  assert.equal(substituteKey('a::(?<x>\\w+)', ['x'], { x: '' }), 'a::(?<x>\\w+)');
  assert.equal(substituteKey('plain::key', ['x'], { x: '1' }), 'plain::key');
  assert.equal(hasSegments('plain::key'), false);
});

test('escapes, character classes, nested and non-capturing groups are not segments', () => {
  assert.deepEqual(captureGroups('a\\(b\\)[(]c(?:d|e)'), []);
  const groups = captureGroups('x::(?<outer>(a|b)c)::(?:z)::(q)');
  assert.deepEqual(
    groups.map((g) => g.name),
    ['outer', null],
  );
  assert.equal(
    substituteKey('x::(?<outer>(a|b)c)::(?:z)::(q)', ['outer', 'other'], { outer: 'ac', other: 'Q' }),
    'x::ac::(?:z)::Q',
  );
});

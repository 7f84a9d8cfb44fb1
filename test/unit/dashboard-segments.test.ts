import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorBag } from '../../src/domain/dashboards/issues';
import { normalizeSegments } from '../../src/domain/dashboards/segments';
import { isPeriod } from '../../src/domain/dashboards/periods';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function check(segments: unknown) {
  const bag = new ErrorBag();
  const output = normalizeSegments(segments, bag) as Array<Record<string, any>>;
  return { output, errors: bag.fields };
}

describe('segments normalisation', () => {
  test('a select segment gets ids, labels and default flags', () => {
    const { output, errors } = check([
      {
        name: 'country',
        default_value: 'US',
        groups: [{ label: 'Markets', items: [{ value: 'DE' }, { value: 'US', label: 'United States' }] }],
      },
    ]);
    assert.deepEqual(errors, {});
    const [segment] = output;
    assert.match(segment!.id, UUID);
    assert.equal(segment!.label, 'country');
    assert.equal(segment!.type, 'select');
    assert.equal(segment!.placeholder, null);
    const items = segment!.groups[0].items;
    assert.match(segment!.groups[0].id, UUID);
    assert.deepEqual(
      items.map((i: Record<string, unknown>) => [i.label, i.value, i.default]),
      [
        ['DE', 'DE', false],
        ['United States', 'US', true],
      ],
    );
    assert.match(items[0].id, UUID);
    assert.notEqual(items[0].id, items[1].id);
  });

  test('given ids and labels are kept; a sent default flag is recomputed', () => {
    const { output } = check([
      {
        id: 's1',
        name: 'env',
        label: 'Environment',
        groups: [{ id: 'g1', items: [{ id: 'i1', value: 'prod', default: true }] }],
      },
    ]);
    const [segment] = output;
    assert.equal(segment!.id, 's1');
    assert.equal(segment!.label, 'Environment');
    assert.equal(segment!.groups[0].id, 'g1');
    assert.equal(segment!.groups[0].label, '');
    assert.deepEqual(segment!.groups[0].items[0], { id: 'i1', value: 'prod', default: false, label: 'prod' });
  });

  test('a text segment keeps its placeholder and default value', () => {
    const { output, errors } = check([
      { name: 'q', type: 'text', placeholder: 'Search', default_value: 'abc', ui: { width: 2 } },
    ]);
    assert.deepEqual(errors, {});
    const [segment] = output;
    assert.equal(segment!.type, 'text');
    assert.equal(segment!.placeholder, 'Search');
    assert.equal(segment!.default_value, 'abc');
    assert.deepEqual(segment!.groups, []);
    assert.deepEqual(segment!.ui, { width: 2 }, 'unknown fields are kept');
  });

  test('errors name the segment by position', () => {
    const { errors } = check([
      { name: ' ' },
      7,
      { name: 'a', type: 'multi' },
      { name: 'b', groups: [{ items: [{ label: 'x' }] }] },
      { name: 'c', type: 'text', groups: [{ items: [] }] },
      { name: 'd', placeholder: 3 },
    ]);
    assert.deepEqual(errors, {
      'segments[0].name': ['must not be blank'],
      'segments[1]': ['must be a segment object'],
      'segments[2].type': ['must be one of select, text'],
      'segments[3].groups[0].items[0].value': ['is required'],
      'segments[4].groups': ['must be empty for a text segment'],
      'segments[5].placeholder': ['must be a string or null'],
    });
  });

  test('names and item values are unique; default_value must be an item value', () => {
    const { errors } = check([
      { name: 'a', default_value: 'zz', groups: [{ items: [{ value: 'x' }] }, { items: [{ value: 'x' }] }] },
      { name: 'a' },
    ]);
    assert.deepEqual(errors, {
      'segments[0].groups[1].items[0].value': ['must be unique in the segment'],
      'segments[0].default_value': ["must be the value of one of the segment's items"],
      'segments[1].name': ['must be unique among the segments'],
    });
  });

  test('segments must be a list', () => {
    assert.deepEqual(check({}).errors, { segments: ['must be a list of segments'] });
  });
});

describe('periods', () => {
  test('count and unit', () => {
    for (const ok of ['1m', '24h', '7d', '1w', '6mo', '1q', '1y', '30s'])
      assert.equal(isPeriod(ok), true, ok);
    for (const bad of ['0h', 'h', '1', '1hour', '1H', ' 1h', '-1d', '1.5h', ''])
      assert.equal(isPeriod(bad), false, bad);
  });
});

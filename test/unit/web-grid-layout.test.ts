// The editing grid's layout rules (web/lib/grid-layout.ts): never an overlap after a move, a resize
// or a compaction, upward compaction, the first free space for new widgets; fast-check over random
// grids and moves.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  applyWidget,
  collides,
  compact,
  firstFree,
  hasOverlap,
  place,
  type Box,
} from '../../web/lib/grid-layout';

const box = fc.record({
  x: fc.integer({ min: 0, max: 11 }),
  y: fc.integer({ min: 0, max: 20 }),
  w: fc.integer({ min: 1, max: 12 }),
  h: fc.integer({ min: 1, max: 6 }),
});

describe('grid layout', () => {
  test('compaction floats widgets up and removes overlaps', () => {
    const out = compact([
      { x: 0, y: 5, w: 6, h: 2 },
      { x: 0, y: 5, w: 6, h: 2 },
      { x: 6, y: 9, w: 6, h: 3 },
    ]);
    assert.deepEqual(
      out.map((b) => [b.x, b.y]),
      [
        [0, 0],
        [0, 2],
        [6, 0],
      ],
    );
  });

  test('a widget dropped onto another pushes it down, then both float up', () => {
    const grid: Box[] = [
      { x: 0, y: 0, w: 6, h: 2 },
      { x: 6, y: 0, w: 6, h: 2 },
      { x: 0, y: 2, w: 12, h: 3 },
    ];
    const out = place(grid, 2, { x: 0, y: 0, w: 12, h: 3 });
    assert.deepEqual(out[2], { x: 0, y: 0, w: 12, h: 3 });
    assert.equal(out[0]!.y, 3);
    assert.equal(out[1]!.y, 3);
    assert.equal(hasOverlap(out), false);
  });

  test('dragging a widget below another swaps them', () => {
    const grid: Box[] = [
      { x: 0, y: 0, w: 12, h: 2 },
      { x: 0, y: 2, w: 12, h: 3 },
    ];
    const out = place(grid, 0, { x: 0, y: 3, w: 12, h: 2 });
    assert.deepEqual(out[1], { x: 0, y: 0, w: 12, h: 3 });
    assert.deepEqual(out[0], { x: 0, y: 3, w: 12, h: 2 });
  });

  test('one step down goes under the widget below (the keyboard can move a widget down)', () => {
    const grid: Box[] = [
      { x: 0, y: 0, w: 12, h: 2 },
      { x: 0, y: 2, w: 6, h: 2 },
      { x: 6, y: 2, w: 6, h: 3 },
    ];
    const out = place(grid, 0, { x: 0, y: 1, w: 12, h: 2 });
    assert.deepEqual(out[0], { x: 0, y: 3, w: 12, h: 2 });
    assert.equal(out[1]!.y, 0);
    assert.equal(out[2]!.y, 0);
    // and one step up brings it back on top
    const back = place(out, 0, { x: 0, y: 2, w: 12, h: 2 });
    assert.equal(back[0]!.y, 0);
  });

  test('resizing wider pushes the neighbour below instead of covering it', () => {
    const grid: Box[] = [
      { x: 0, y: 0, w: 6, h: 2 },
      { x: 6, y: 0, w: 6, h: 2 },
    ];
    const out = place(grid, 0, { x: 0, y: 0, w: 8, h: 2 });
    assert.deepEqual(out[0], { x: 0, y: 0, w: 8, h: 2 });
    assert.deepEqual(out[1], { x: 6, y: 2, w: 6, h: 2 });
  });

  test('the first free space is the top-most, left-most hole that fits', () => {
    const grid: Box[] = [
      { x: 0, y: 0, w: 6, h: 2 },
      { x: 9, y: 0, w: 3, h: 2 },
    ];
    assert.deepEqual(firstFree(grid, 3, 2), { x: 6, y: 0 });
    assert.deepEqual(firstFree(grid, 6, 2), { x: 0, y: 2 });
    assert.deepEqual(firstFree([], 12, 4), { x: 0, y: 0 });
  });

  test('property: any move or resize of any grid leaves no overlap, inside 12 columns, nothing lost', () => {
    fc.assert(
      fc.property(fc.array(box, { minLength: 1, maxLength: 14 }), box, fc.nat(), (grid, target, pick) => {
        const index = pick % grid.length;
        const out = place(grid, index, target);
        assert.equal(out.length, grid.length);
        assert.equal(hasOverlap(out), false);
        for (const b of out) assert.ok(b.x >= 0 && b.x + b.w <= 12 && b.y >= 0 && b.w >= 1 && b.h >= 1);
        // Sizes are kept (only positions change), except the moved widget's.
        out.forEach((b, i) => {
          if (i !== index) assert.deepEqual([b.w, b.h], [Math.min(12, grid[i]!.w), grid[i]!.h]);
        });
        // Compacted: no widget could move up by one row.
        out.forEach((b, i) => {
          if (b.y === 0) return;
          const up = { ...b, y: b.y - 1 };
          assert.ok(
            out.some((o, j) => j !== i && collides(o, up)),
            `widget ${i} could float up: ${JSON.stringify(out)}`,
          );
        });
      }),
      { numRuns: 500 },
    );
  });

  test('property: a new widget at the first free space overlaps nothing', () => {
    fc.assert(
      fc.property(fc.array(box, { maxLength: 14 }), box, (grid, size) => {
        const laid = compact(grid);
        const spot = firstFree(laid, size.w, size.h);
        assert.equal(hasOverlap([...laid, { ...spot, w: size.w, h: size.h }]), false);
      }),
      { numRuns: 300 },
    );
  });
  // The widget form's Apply, by the id of the widget the form was opened for.
  const widget = (id: string, x: number, y: number, w = 3, h = 2) => ({ id, title: id, x, y, w, h });
  const fresh = (items: readonly { id: string }[]) => `new-${items.length + 1}`;

  test('Apply replaces the widget where it is now, after a widget before it was removed', () => {
    const grid = [widget('a', 0, 0), widget('b', 3, 0), widget('c', 6, 0)];
    // The form opened on c (index 2), then a was removed: c is at index 1 now.
    const now = compact(grid.filter((w) => w.id !== 'a'));
    const out = applyWidget(now, 'c', { ...widget('c', 6, 0), title: 'C edited' }, fresh);
    assert.deepEqual(
      out.map((w) => [w.id, w.title]),
      [
        ['b', 'b'],
        ['c', 'C edited'],
      ],
    );
    // The form opened on b (index 1), then a was removed: index 1 is c now, and stays c.
    const other = applyWidget(now, 'b', { ...widget('b', 3, 0), title: 'B edited' }, fresh);
    assert.deepEqual(
      other.map((w) => [w.id, w.title]),
      [
        ['b', 'B edited'],
        ['c', 'c'],
      ],
    );
  });

  test('Apply of a widget removed while its form was open, or of a new one, adds it; a taken id is replaced', () => {
    const grid = [widget('a', 0, 0), widget('b', 3, 0)];
    const readded = applyWidget(grid, 'gone', widget('gone', 6, 0, 6, 3), fresh);
    assert.deepEqual(
      readded.map((w) => w.id),
      ['a', 'b', 'gone'],
    );
    // A new widget whose id a duplicate took while its form was open gets another one.
    const added = applyWidget(grid, null, widget('b', 0, 4), fresh);
    assert.deepEqual(
      added.map((w) => w.id),
      ['a', 'b', 'new-3'],
    );
    assert.equal(hasOverlap(added), false);
  });

  test('property: Apply keeps every other widget and its id, and leaves no overlap', () => {
    fc.assert(
      fc.property(
        fc.array(box, { minLength: 1, maxLength: 12 }),
        box,
        fc.nat(),
        fc.boolean(),
        (boxes, target, pick, isNew) => {
          const grid = compact(boxes).map((b, i) => ({ ...b, id: `w${i}`, title: '' }));
          const id = isNew ? null : grid[pick % grid.length]!.id;
          const out = applyWidget(
            grid,
            id,
            { ...target, id: id ?? `w${pick % grid.length}`, title: 'edited' },
            fresh,
          );
          assert.equal(out.length, grid.length + (isNew ? 1 : 0));
          assert.equal(new Set(out.map((w) => w.id)).size, out.length, 'ids stay unique');
          for (const w of grid) assert.ok(out.some((o) => o.id === w.id));
          assert.equal(out.filter((w) => w.title === 'edited').length, 1);
          assert.equal(hasOverlap(out), false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

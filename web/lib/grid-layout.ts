// The dashboard grid's layout rules while editing (issue 24, M4): widgets never overlap, a widget
// moved or resized pushes the ones it lands on downwards, and everything then floats up as far as
// it can (vertical compaction, as Grafana and react-grid-layout do). New widgets go to the first
// free space. Pure functions over the grid's geometry, shared by dragging and the keyboard buttons.

export const COLUMNS = 12;

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export function collides(a: Box, b: Box): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** Inside the 12 columns, at least 1×1, whole numbers. */
export function clampBox<T extends Box>(w: T): T {
  const width = Math.min(COLUMNS, Math.max(1, Math.round(w.w)));
  return {
    ...w,
    w: width,
    h: Math.max(1, Math.round(w.h)),
    x: Math.min(COLUMNS - width, Math.max(0, Math.round(w.x))),
    y: Math.max(0, Math.round(w.y)),
  };
}

/** Where one item is taken in the reading order: at row `y`, ahead of (or after) the others there. */
interface Turn {
  index: number;
  y: number;
  ahead: boolean;
}

/** Reading order: row, then column, then index; `turn` moves one item to its own row and side. */
function byPosition<T extends Box>(items: readonly T[], turn?: Turn): number[] {
  const rowOf = (i: number) => (turn && i === turn.index ? turn.y : items[i]!.y);
  const side = (i: number) => (turn && i === turn.index ? (turn.ahead ? -1 : 1) : 0);
  return items
    .map((_, i) => i)
    .sort((a, b) => rowOf(a) - rowOf(b) || side(a) - side(b) || items[a]!.x - items[b]!.x || a - b);
}

/**
 * Floats every widget up as far as it goes without overlapping one placed before it (in reading
 * order); the order of the array is kept. Overlaps are resolved by pushing the later widget down.
 */
export function compact<T extends Box>(items: readonly T[], turn?: Turn): T[] {
  const out = items.map((w) => clampBox(w));
  const placed: Box[] = [];
  for (const i of byPosition(out, turn)) {
    const w = out[i]!;
    let y = w.y;
    // Down until free of everything placed, then up while still free.
    while (placed.some((p) => collides(p, { ...w, y }))) y++;
    while (y > 0 && !placed.some((p) => collides(p, { ...w, y: y - 1 }))) y--;
    out[i] = { ...w, y };
    placed.push(out[i]!);
  }
  return out;
}

/**
 * Puts item `index` at `box` and lays out the rest by compaction. Moved up onto widgets, it goes
 * above them; moved down onto widgets, it goes under them (they take the room it left); so one step
 * with the keyboard, or a short drag, swaps a widget with its neighbour. Sideways, it takes its place
 * and the widgets it lands on move down under it.
 */
export function place<T extends Box>(items: readonly T[], index: number, box: Box): T[] {
  const before = clampBox(items[index]!);
  const moved = clampBox({ ...items[index]!, ...box });
  const next = items.map((w, i) => (i === index ? moved : w));
  let turn: Turn = { index, y: moved.y, ahead: true };
  if (moved.y > before.y) {
    const under = next.filter((w, i) => i !== index && w.y > before.y && collides(clampBox(w), moved));
    if (under.length > 0) turn = { index, y: Math.max(...under.map((w) => w.y)), ahead: false };
  } else if (moved.y < before.y) {
    const over = next.filter((w, i) => i !== index && w.y < before.y && collides(clampBox(w), moved));
    if (over.length > 0) turn = { index, y: Math.min(...over.map((w) => w.y)), ahead: true };
  }
  return compact(next, turn);
}

/** The first place (top to bottom, left to right) where a w×h widget fits without overlapping. */
export function firstFree(items: readonly Box[], w: number, h: number): { x: number; y: number } {
  const width = Math.min(COLUMNS, Math.max(1, w));
  const bottom = items.reduce((max, b) => Math.max(max, b.y + b.h), 0);
  for (let y = 0; y <= bottom; y++) {
    for (let x = 0; x + width <= COLUMNS; x++) {
      const box = { x, y, w: width, h };
      if (!items.some((b) => collides(b, box))) return { x, y };
    }
  }
  return { x: 0, y: bottom };
}

/** True when no two widgets overlap (what a saved grid must hold). */
export function hasOverlap(items: readonly Box[]): boolean {
  for (let i = 0; i < items.length; i++)
    for (let j = i + 1; j < items.length; j++) if (collides(items[i]!, items[j]!)) return true;
  return false;
}

/**
 * The widget form's Apply: `widget` takes the place of the item whose id is `id` wherever that item
 * is now (the grid may have changed while the form was open: a widget removed before it shifts the
 * indices), laid out as a move to its box. With no such item (a new widget, or one removed while its
 * form was open) it is added at the end; an id taken meanwhile (a duplicate made while the form was
 * open) is replaced by `freshId`. So Apply never writes over another widget nor drops the form's
 * content.
 */
export function applyWidget<T extends Box & { id: string }>(
  items: readonly T[],
  id: string | null,
  widget: T,
  freshId: (items: readonly T[]) => string,
): T[] {
  const index = id === null ? -1 : items.findIndex((w) => w.id === id);
  if (index >= 0)
    return place(
      items.map((w, i) => (i === index ? widget : w)),
      index,
      widget,
    );
  const added = items.some((w) => w.id === widget.id) ? { ...widget, id: freshId(items) } : widget;
  return place([...items, added], items.length, added);
}

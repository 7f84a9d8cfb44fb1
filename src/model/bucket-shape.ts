// Bucket rows without trees: most rows of a metric key hold the same leaves in the same order
// (`{"count":5,"amount":{"net":12.5,"tax":3}}`), so a fold keeps a row as its shape (the leaf
// paths, interned) and a Float64Array of values, adds a delta leaf by leaf, and writes the JSON
// text by filling the shape's template. That spares a JSON.parse, a tree of objects and a
// JSON.stringify per row and fold, which were most of a fold's cost.
//
// The template is what JSON.stringify gives for the nested leaves (cut where the values go), so
// the text is exactly the one the tree path writes. Rows a shape cannot spell (a path that is both
// a leaf and a map, a value that is not a number) and deltas that would change a row that way go
// through trees (leaves.ts), as before.
//
// Every step costs work in proportion to the leaves it touches, so that a wide row (a key whose
// points keep bringing new leaf names, up to hundreds of thousands in one bucket) is folded in
// time linear in its width: a template is spelled in one walk of the nested leaves, and a shape
// finds a leaf of another through an index from path to place.
import { PathSplitter, type Tree, addToLeaf, setLeaf } from './leaves';
import type { RowDelta } from './row-delta';

/** The JSON text of a stored bucket, as a shape and its values, or as a tree when no shape fits. */
export type BucketValue =
  | { shape: Shape; values: Float64Array; tree?: undefined }
  | { tree: Tree; shape?: undefined; values?: undefined };

export class Shape {
  /** template pieces: text[0] value text[1] value ... text[n]; null when the paths do not nest plainly */
  private readonly text: string[] | null;
  /** the leaf whose value comes after text[i] */
  private readonly order: Int32Array;
  /** where each leaf of another shape sits in this one (-1: absent), by that shape */
  private readonly mappings = new Map<Shape, Int32Array>();
  /** path -> its place in this shape (made on first use) */
  private index: Map<string, number> | null = null;

  constructor(
    readonly paths: readonly string[],
    private readonly registry: ShapeRegistry,
  ) {
    const cut = template(paths, registry.splitter);
    registry.steps += paths.length;
    this.text = cut?.text ?? null;
    this.order = cut?.order ?? new Int32Array(0);
  }

  get renderable(): boolean {
    return this.text !== null;
  }

  /**
   * The values of a stored text that is this shape's template filled with JSON numbers, all
   * finite, or null. Only for a shape whose leaves come in its text's order (one parseBucket made
   * from a text): what JSON.parse and flatten would read from such a text.
   */
  read(text: string): Float64Array | null {
    const pieces = this.text!;
    const first = pieces[0]!;
    if (!text.startsWith(first)) return null;
    let pos = first.length;
    const n = this.order.length;
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      JSON_NUMBER.lastIndex = pos;
      const m = JSON_NUMBER.exec(text);
      if (m === null) return null;
      const value = Number(m[0]);
      if (!Number.isFinite(value)) return null;
      values[i] = value;
      pos += m[0].length;
      const piece = pieces[i + 1]!;
      if (!text.startsWith(piece, pos)) return null;
      pos += piece.length;
    }
    return pos === text.length ? values : null;
  }

  /** Whether the template's values come in the order of the paths (read can take its texts). */
  get inTextOrder(): boolean {
    if (this.text === null) return false;
    for (let i = 0; i < this.order.length; i++) if (this.order[i] !== i) return false;
    return true;
  }

  render(values: Float64Array): string {
    const text = this.text!;
    let out = text[0]!;
    for (let i = 0; i < this.order.length; i++) out += String(values[this.order[i]!]) + text[i + 1]!;
    return out;
  }

  /** Index in this shape of each leaf of `other`, -1 where it has none. */
  mapping(other: Shape): Int32Array {
    let map = this.mappings.get(other);
    if (!map) {
      if (this.mappings.size >= 64) this.mappings.clear();
      if (!this.index) {
        this.index = new Map();
        for (let i = 0; i < this.paths.length; i++)
          if (!this.index.has(this.paths[i]!)) this.index.set(this.paths[i]!, i);
        this.registry.steps += this.paths.length;
      }
      const index = this.index;
      map = Int32Array.from(other.paths, (p) => index.get(p) ?? -1);
      this.registry.steps += other.paths.length;
      this.mappings.set(other, map);
    }
    return map;
  }
}

/** A JSON number at lastIndex (JSON's grammar: no `+`, no leading zeros, no bare `.`). */
const JSON_NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * The text JSON.stringify gives for the nested leaves, cut where their values go, and which leaf
 * goes in each cut; null when a leaf is missing from the nesting (a later path replaced it). One
 * walk of the tree in JSON.stringify's order (Object.keys: integer-like names first), each leaf
 * holding its index.
 */
function template(
  paths: readonly string[],
  splitter: PathSplitter,
): { text: string[]; order: Int32Array } | null {
  const tree: Tree = {};
  paths.forEach((path, i) => setLeaf(tree, splitter.split(path), i));
  const text: string[] = [];
  const order: number[] = [];
  let piece = '';
  const walk = (node: Tree): void => {
    piece += '{';
    let first = true;
    for (const name of Object.keys(node)) {
      piece += `${first ? '' : ','}${JSON.stringify(name)}:`;
      first = false;
      const value = node[name];
      if (typeof value === 'number') {
        text.push(piece);
        piece = '';
        order.push(value);
      } else walk(value as Tree);
    }
    piece += '}';
  };
  walk(tree);
  text.push(piece);
  return order.length === paths.length ? { text, order: Int32Array.from(order) } : null;
}

/**
 * Shapes by their paths; bounded (a client can spell endless shapes, and a wide key a new shape
 * of as many leaves per fold), then simply started over: at `limit` shapes or `pathLimit` paths.
 */
export class ShapeRegistry {
  private readonly byList = new WeakMap<readonly string[], Shape>();
  private readonly byText = new Map<string, Shape>();
  private paths = 0;
  /** shapes parseBucket read stored texts as lately, most recent first (readKnown) */
  private recent: Shape[] = [];
  readonly splitter = new PathSplitter();
  /** paths visited making and mapping shapes and growing buckets (tests check how it grows) */
  steps = 0;

  constructor(
    private readonly limit = 20_000,
    private readonly pathLimit = 2_000_000,
  ) {}

  of(paths: readonly string[]): Shape {
    let shape = this.byList.get(paths);
    if (shape) return shape;
    const text = paths.map((p) => `${p.length}:${p}`).join('');
    this.steps += paths.length;
    shape = this.byText.get(text);
    if (!shape) {
      if (this.byText.size >= this.limit || this.paths + paths.length > this.pathLimit) {
        this.byText.clear();
        this.paths = 0;
        this.recent = [];
      }
      this.byText.set(text, (shape = new Shape(paths, this)));
      this.paths += paths.length;
    }
    this.byList.set(paths, shape);
    return shape;
  }

  /**
   * A stored text read by one of the shapes parseBucket read texts as lately (most rows of a key
   * share their leaves), without JSON.parse: the shape and the values parseBucket would give, or null.
   */
  readKnown(text: string): { shape: Shape; values: Float64Array } | null {
    const recent = this.recent;
    for (let i = 0; i < recent.length; i++) {
      const shape = recent[i]!;
      const values = shape.read(text);
      if (values === null) continue;
      if (i > 0) {
        recent.splice(i, 1);
        recent.unshift(shape);
      }
      return { shape, values };
    }
    return null;
  }

  /** Keeps a shape parseBucket read `text` as, for readKnown, if it reads that text the same way. */
  remember(shape: Shape, text: string, values: Float64Array): void {
    if (this.recent.includes(shape) || !shape.inTextOrder) return;
    const read = shape.read(text);
    if (read === null || read.length !== values.length) return;
    for (let i = 0; i < read.length; i++) if (!Object.is(read[i], values[i])) return;
    this.recent.unshift(shape);
    if (this.recent.length > RECENT_SHAPES) this.recent.pop();
  }
}

/** Shapes readKnown tries before JSON.parse. */
const RECENT_SHAPES = 4;

/**
 * The leaves of a tree in its key order; false where a shape could not spell the tree again (a
 * value that is not a finite number, an empty map, a name with a dot, which paths would split).
 */
function flatten(node: Tree, prefix: string, paths: string[], values: number[]): boolean {
  const names = Object.keys(node);
  if (names.length === 0 && prefix !== '') return false;
  for (const name of names) {
    if (name.includes('.')) return false;
    const value = node[name];
    const path = prefix === '' ? name : `${prefix}.${name}`;
    if (typeof value === 'number' && Number.isFinite(value)) {
      paths.push(path);
      values.push(value);
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      if (!flatten(value as Tree, path, paths, values)) return false;
    } else return false;
  }
  return true;
}

/** A stored bucket's text as a BucketValue (an unreadable text reads as an empty bucket). */
export function parseBucket(text: string | undefined, shapes: ShapeRegistry): BucketValue {
  if (text) {
    const known = shapes.readKnown(text);
    if (known !== null) return known;
  }
  let tree: Tree = {};
  if (text) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) tree = value as Tree;
    } catch {
      // an unreadable row reads as empty, as in parseTree
    }
  }
  const paths: string[] = [];
  const values: number[] = [];
  if (!flatten(tree, '', paths, values)) return { tree };
  const shape = shapes.of(paths);
  if (!shape.renderable) return { tree };
  const read = Float64Array.from(values);
  if (text) shapes.remember(shape, text, read);
  return { shape, values: read };
}

/**
 * The bucket with the delta's missing leaves appended (value 0), if that shape nests plainly. A
 * new bucket takes the delta's own shape when its leaves keep their order (none or all replaced).
 */
function grow(
  bucket: BucketValue,
  delta: RowDelta,
  map: Int32Array,
  shapes: ShapeRegistry,
  deltaShape: Shape,
): BucketValue | null {
  const { set } = delta;
  if (bucket.shape!.paths.length === 0 && (set === null || set.every((s) => s === set[0]))) {
    if (!deltaShape.renderable) return null;
    shapes.steps += delta.paths.length;
    return { shape: deltaShape, values: new Float64Array(delta.paths.length) };
  }
  const paths = [...bucket.shape!.paths];
  for (const replaced of [true, false]) {
    for (let i = 0; i < map.length; i++) {
      if (map[i] === -1 && (delta.set !== null && delta.set[i] === 1) === replaced)
        paths.push(delta.paths[i]!);
    }
  }
  const shape = shapes.of(paths);
  shapes.steps += paths.length;
  if (!shape.renderable) return null;
  const values = new Float64Array(paths.length);
  values.set(bucket.values!);
  return { shape, values };
}

function asTree(bucket: BucketValue, splitter: PathSplitter): Tree {
  if (bucket.tree) return bucket.tree;
  const tree: Tree = {};
  bucket.shape.paths.forEach((path, i) => setLeaf(tree, splitter.split(path), bucket.values[i]!));
  return tree;
}

/**
 * Applies a delta: in place where the shape holds every leaf it names; with the new leaves added
 * after the others (replaced ones first, as applyDelta puts them into a tree) where that shape
 * still nests plainly; else through a tree.
 */
export function applyToBucket(
  bucket: BucketValue,
  delta: RowDelta,
  deltaShape: Shape,
  shapes: ShapeRegistry,
): BucketValue {
  if (bucket.shape) {
    let map = bucket.shape === deltaShape ? null : bucket.shape.mapping(deltaShape);
    if (map !== null && map.indexOf(-1) >= 0) {
      const grown = grow(bucket, delta, map, shapes, deltaShape);
      if (grown) {
        bucket = grown;
        map = bucket.shape === deltaShape ? null : bucket.shape!.mapping(deltaShape);
      }
    }
    if (map === null || map.indexOf(-1) < 0) {
      const values = bucket.values!;
      const { set } = delta;
      for (let i = 0; i < delta.paths.length; i++) {
        const at = map === null ? i : map[i]!;
        if (set !== null && set[i] === 1) values[at] = delta.values[i]!;
        else {
          const sum = values[at]! + delta.values[i]!;
          if (Number.isFinite(sum)) values[at] = sum; // the last guard, as in leaves.ts addToLeaf
        }
      }
      return bucket;
    }
  }
  const tree = asTree(bucket, shapes.splitter);
  const { paths, values, set } = delta;
  for (let i = 0; i < paths.length; i++)
    if (set !== null && set[i] === 1) setLeaf(tree, shapes.splitter.split(paths[i]!), values[i]!);
  for (let i = 0; i < paths.length; i++)
    if (set === null || set[i] !== 1) addToLeaf(tree, shapes.splitter.split(paths[i]!), values[i]!);
  return parseBucket(JSON.stringify(tree), shapes);
}

export function renderBucket(bucket: BucketValue): string {
  return bucket.shape ? bucket.shape.render(bucket.values) : JSON.stringify(bucket.tree);
}

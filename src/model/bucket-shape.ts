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

  constructor(
    readonly paths: readonly string[],
    splitter: PathSplitter,
  ) {
    const cut = template(paths, splitter);
    this.text = cut?.text ?? null;
    this.order = cut?.order ?? new Int32Array(0);
  }

  get renderable(): boolean {
    return this.text !== null;
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
      map = Int32Array.from(other.paths, (p) => this.paths.indexOf(p));
      this.mappings.set(other, map);
    }
    return map;
  }
}

/** Sentinel numbers that JSON.stringify spells uniquely, to find where each leaf's value goes. */
const sentinel = (i: number) => -(i + 0.5) * 1e-300;

function template(
  paths: readonly string[],
  splitter: PathSplitter,
): { text: string[]; order: Int32Array } | null {
  const tree: Tree = {};
  paths.forEach((path, i) => setLeaf(tree, splitter.split(path), sentinel(i)));
  const json = JSON.stringify(tree);
  const found: Array<[at: number, leaf: number, length: number]> = [];
  for (let i = 0; i < paths.length; i++) {
    const spelled = `:${String(sentinel(i))}`;
    const at = json.indexOf(spelled);
    // absent (a later path replaced it), or spelled twice (a name holds the same text): no template
    if (at < 0 || json.indexOf(spelled, at + 1) >= 0) return null;
    const after = json[at + spelled.length];
    if (after !== ',' && after !== '}') return null;
    found.push([at + 1, i, spelled.length - 1]);
  }
  found.sort((a, b) => a[0] - b[0]);
  const text: string[] = [];
  let from = 0;
  for (const [at, , length] of found) {
    text.push(json.slice(from, at));
    from = at + length;
  }
  text.push(json.slice(from));
  return { text, order: Int32Array.from(found, (f) => f[1]) };
}

/** Shapes by their paths; bounded (a client can spell endless shapes), then simply started over. */
export class ShapeRegistry {
  private readonly byList = new WeakMap<readonly string[], Shape>();
  private readonly byText = new Map<string, Shape>();
  readonly splitter = new PathSplitter();

  constructor(private readonly limit = 20_000) {}

  of(paths: readonly string[]): Shape {
    let shape = this.byList.get(paths);
    if (shape) return shape;
    const text = paths.map((p) => `${p.length}:${p}`).join('');
    shape = this.byText.get(text);
    if (!shape) {
      if (this.byText.size >= this.limit) this.byText.clear();
      this.byText.set(text, (shape = new Shape(paths, this.splitter)));
    }
    this.byList.set(paths, shape);
    return shape;
  }
}

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
  return shape.renderable ? { shape, values: Float64Array.from(values) } : { tree };
}

/** The bucket with the delta's missing leaves appended (value 0), if that shape nests plainly. */
function grow(
  bucket: BucketValue,
  delta: RowDelta,
  map: Int32Array,
  shapes: ShapeRegistry,
): BucketValue | null {
  const paths = [...bucket.shape!.paths];
  for (const replaced of [true, false]) {
    for (let i = 0; i < map.length; i++) {
      if (map[i] === -1 && (delta.set !== null && delta.set[i] === 1) === replaced)
        paths.push(delta.paths[i]!);
    }
  }
  const shape = shapes.of(paths);
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
      const grown = grow(bucket, delta, map, shapes);
      if (grown) {
        bucket = grown;
        map = bucket.shape!.mapping(deltaShape);
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

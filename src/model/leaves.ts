// Nested metric values <-> dot paths. A point's values are flattened to dot paths when they are
// merged (`{amount: {total: 3}}` -> `amount.total`); a key that itself contains a dot is joined
// the same way (`{"amount.total": 3}` is the same leaf), as Trifle::Stats packs values. Reads rebuild
// the nesting by splitting paths on dots.
//
// A path that is both a leaf and a map (`a` = 1, then `a.b` = 2) cannot be nested: the later write
// replaces the other (as Trifle::Stats' unpack lets the later key win).
//
// Segments are written as own properties, so a segment named `__proto__` is stored as data and
// never reaches an object's prototype.
import type { BucketOps } from './write-set';

export type Tree = Record<string, unknown>;

function child(node: Tree, segment: string): unknown {
  return Object.hasOwn(node, segment) ? node[segment] : undefined;
}

function put(node: Tree, segment: string, value: unknown): void {
  if (segment === '__proto__') {
    Object.defineProperty(node, segment, { value, writable: true, enumerable: true, configurable: true });
  } else {
    node[segment] = value;
  }
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Splits dot paths, remembering recent results (the same few paths recur in every bucket). */
export class PathSplitter {
  private readonly cache = new Map<string, string[]>();
  constructor(private readonly limit = 10_000) {}

  split(path: string): string[] {
    let parts = this.cache.get(path);
    if (parts === undefined) {
      if (this.cache.size >= this.limit) this.cache.clear();
      parts = path.split('.');
      this.cache.set(path, parts);
    }
    return parts;
  }
}

/** The map that holds the last segment of `parts`, created (or replacing a leaf) on the way. */
function parentOf(root: Tree, parts: readonly string[]): Tree {
  let node = root;
  for (let i = 0; i < parts.length - 1; i++) {
    const segment = parts[i]!;
    const next = child(node, segment);
    if (isTree(next)) node = next;
    else {
      const created: Tree = {};
      put(node, segment, created);
      node = created;
    }
  }
  return node;
}

export function setLeaf(root: Tree, parts: readonly string[], value: number): void {
  put(parentOf(root, parts), parts[parts.length - 1]!, value);
}

export function addToLeaf(root: Tree, parts: readonly string[], amount: number): void {
  const parent = parentOf(root, parts);
  const last = parts[parts.length - 1]!;
  const old = child(parent, last);
  const stored = typeof old === 'number' ? old : 0;
  const sum = stored + amount;
  // The engine refuses a track that would overflow (422) before accepting it; this is the last
  // guard, so a store never holds a number JSON cannot spell.
  put(parent, last, Number.isFinite(sum) ? sum : stored);
}

/** Applies one bucket's pending operations to its stored nested values. */
export function applyBucketOps(root: Tree, ops: BucketOps, splitter: PathSplitter): void {
  if (ops.set) for (const [path, value] of ops.set) setLeaf(root, splitter.split(path), value);
  for (const [path, amount] of ops.add) addToLeaf(root, splitter.split(path), amount);
}

/** Rebuilds nesting from (dot path, value) pairs; later pairs win conflicts. */
export function nestLeaves(leaves: Iterable<[string, number]>, splitter: PathSplitter): Tree {
  const root: Tree = {};
  for (const [path, value] of leaves) setLeaf(root, splitter.split(path), value);
  return root;
}

/** Parses stored JSON text into a tree; anything that is not a JSON object reads as empty. */
export function parseTree(text: string | null | undefined): Tree {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return isTree(value) ? value : {};
  } catch {
    return {};
  }
}

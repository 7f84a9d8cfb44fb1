// The code's layout: every import of src/ and web/ read from the files, and each arrow checked
// against the floors below and the line between the server and the browser. An arrow may point
// down or sideways (same floor), never up; web/ is the browser's code and src/ the server's.
//
// Floors, from the bottom:
//   0  src/lib, src/shared (code for the server and the browser), and what every floor reads:
//      src/errors.ts, src/config*.ts, src/config-example.ts, src/version.ts, src/sea (the single
//      executable's glue, which must know nothing of the domain or the drivers)
//   1  src/model
//   2  src/drivers, src/storage
//   3  src/domain
//   4  src/http, src/ops, src/intake, src/alerts, src/demo
//   5  the composition root: src/app.ts, src/server.ts, src/main.ts, src/cli.ts, src/deps.ts
// Further rules:
//   - src/deps.ts (the composition root's wiring type) may be imported by floor 4, which is handed
//     it, and by the root; never by src/domain or below.
//   - src/model imports only src/lib, src/shared and src/errors.ts (a wire form of an error crosses
//     threads with the points).
//   - web/ imports only web/, src/shared/, and a src/lib file that is pure: one that imports nothing
//     but other such src/lib files (no Node built-in, no package, no server module), so that what
//     the browser bundle takes from the server's folder is plain computation. src/ imports no web/.
//
// Today's code breaks some rules; KNOWN lists each such arrow, by file, with the reason. The test
// fails on a new breach and on a KNOWN entry that no longer occurs, so delete an entry as soon as
// its file moves (src/shared/ is where code for both sides goes).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Arrows that break a rule today, `from -> to` (paths from the repository root, with extensions). */
const KNOWN: ReadonlyMap<string, string> = new Map([]);

type Floor = { floor: number; name: string };

const FLOORS: ReadonlyArray<[prefix: string, floor: number]> = [
  ['src/lib/', 0],
  ['src/shared/', 0],
  ['src/errors.ts', 0],
  ['src/config.ts', 0],
  ['src/config-example.ts', 0],
  ['src/config-listeners.ts', 0],
  ['src/config-clusters.ts', 0],
  ['src/version.ts', 0],
  ['src/sea/', 0],
  ['src/model/', 1],
  ['src/drivers/', 2],
  ['src/storage/', 2],
  ['src/domain/', 3],
  ['src/http/', 4],
  ['src/ops/', 4],
  ['src/intake/', 4],
  ['src/alerts/', 4],
  ['src/demo/', 4],
  ['src/app.ts', 5],
  ['src/server.ts', 5],
  ['src/main.ts', 5],
  ['src/cli.ts', 5],
  ['src/deps.ts', 5],
];

function floorOf(file: string): Floor | null {
  const hit = FLOORS.find(([prefix]) => (prefix.endsWith('/') ? file.startsWith(prefix) : file === prefix));
  return hit ? { floor: hit[1], name: hit[0] } : null;
}

const SOURCE = /\.(ts|tsx|mts)$/;

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listFiles(rel));
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

// Static imports and re-exports (type-only ones included: a type is a dependency too), side-effect
// imports and dynamic import() with a literal.
const IMPORT =
  /^\s*(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

export function importsOf(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

/** A relative specifier as a repository path, resolved the way the bundler and tsx do. */
function resolve(from: string, specifier: string): string {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  if (/\.(css|json)$/.test(base)) return base;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) {
    try {
      if (statSync(path.join(ROOT, candidate)).isFile()) return candidate;
    } catch {
      // next candidate
    }
  }
  return base;
}

interface Arrow {
  from: string;
  to: string;
  /** the specifier as written, for a package or built-in */
  bare?: string;
}

function arrowsOf(file: string): Arrow[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return importsOf(text).map((spec) =>
    spec.startsWith('.') ? { from: file, to: resolve(file, spec) } : { from: file, to: spec, bare: spec },
  );
}

/** src/lib files the browser may import: each imports only other such files (see the top). */
function pureLibFiles(arrows: Map<string, Arrow[]>): Set<string> {
  const pure = new Set<string>();
  const visiting = new Set<string>();
  const isPure = (file: string): boolean => {
    if (pure.has(file)) return true;
    if (!file.startsWith('src/lib/') && !file.startsWith('src/shared/')) return false;
    if (visiting.has(file)) return true; // a cycle decides nothing by itself
    visiting.add(file);
    const ok = (arrows.get(file) ?? arrowsOf(file)).every((a) => !a.bare && isPure(a.to));
    visiting.delete(file);
    if (ok) pure.add(file);
    return ok;
  };
  for (const file of arrows.keys()) if (file.startsWith('src/lib/')) isPure(file);
  return pure;
}

/** What is wrong with one arrow, or null. Packages and built-ins are left to the bundle checks. */
export function breach(arrow: Arrow, pureLib: ReadonlySet<string>): string | null {
  const { from, to } = arrow;
  const fromWeb = from.startsWith('web/');
  if (arrow.bare) {
    return fromWeb && /^node:/.test(arrow.bare) ? 'the browser imports a Node built-in' : null;
  }
  const toWeb = to.startsWith('web/');
  if (fromWeb) {
    if (toWeb || to.startsWith('src/shared/')) return null;
    if (to.startsWith('src/lib/') && pureLib.has(to)) return null;
    return to.startsWith('src/lib/')
      ? 'the browser imports a src/lib file that is not pure'
      : 'the browser imports server code';
  }
  if (toWeb) return 'the server imports browser code';
  const a = floorOf(from);
  const b = floorOf(to);
  if (!a) return `${from} is on no floor (place its folder in FLOORS)`;
  if (!b) return `${to} is on no floor (place its folder in FLOORS)`;
  if (
    a.name === 'src/model/' &&
    !['src/lib/', 'src/shared/', 'src/model/', 'src/errors.ts'].includes(b.name)
  ) {
    return 'src/model imports something other than src/lib, src/shared and src/errors.ts';
  }
  if (to === 'src/deps.ts')
    return a.floor >= 4 ? null : `floor ${a.floor} (${a.name}) imports the wiring type src/deps.ts`;
  if (b.floor > a.floor) return `up a floor: ${a.name} (${a.floor}) imports ${b.name} (${b.floor})`;
  return null;
}

describe('the layout of src/ and web/', () => {
  const files = [...listFiles('src'), ...listFiles('web')];
  const arrows = new Map(files.map((file) => [file, arrowsOf(file)]));
  const pureLib = pureLibFiles(arrows);

  test('the import reader sees every kind of import', () => {
    const text = [
      "import { a } from './a';",
      "import type { B } from '../b';",
      "export { c } from './c';",
      "export * from './d';",
      "import './e.css';",
      'import {',
      '  f,',
      "} from './f';",
      "const g = await import('./g');",
      '// a comment that says import from nowhere',
    ].join('\n');
    assert.deepEqual(importsOf(text), ['./a', '../b', './c', './d', './e.css', './f', './g']);
    assert.ok(
      arrows.get('src/app.ts')!.some((a) => a.to === 'src/http/router.ts'),
      'src/app.ts imports the router',
    );
  });

  test('the rules catch an arrow up a floor and across the server/browser line', () => {
    const none = new Set<string>();
    assert.match(breach({ from: 'src/model/x.ts', to: 'src/domain/y.ts' }, none)!, /model/);
    assert.match(breach({ from: 'src/storage/x.ts', to: 'src/domain/y.ts' }, none)!, /up a floor/);
    assert.match(breach({ from: 'src/domain/x.ts', to: 'src/http/y.ts' }, none)!, /up a floor/);
    assert.match(breach({ from: 'src/sea/x.ts', to: 'src/drivers/y.ts' }, none)!, /up a floor/);
    assert.match(breach({ from: 'src/http/x.ts', to: 'src/app.ts' }, none)!, /up a floor/);
    assert.match(breach({ from: 'src/domain/x.ts', to: 'src/deps.ts' }, none)!, /wiring type/);
    assert.match(breach({ from: 'web/x.ts', to: 'src/domain/y.ts' }, none)!, /browser imports server code/);
    assert.match(breach({ from: 'web/x.ts', to: 'src/lib/log.ts' }, none)!, /not pure/);
    assert.match(breach({ from: 'web/x.ts', to: 'node:fs', bare: 'node:fs' }, none)!, /built-in/);
    assert.match(breach({ from: 'src/http/x.ts', to: 'web/y.ts' }, none)!, /server imports browser/);
    assert.match(breach({ from: 'src/newfolder/x.ts', to: 'src/lib/y.ts' }, none)!, /no floor/);
    assert.equal(breach({ from: 'src/http/x.ts', to: 'src/deps.ts' }, none), null);
    assert.equal(breach({ from: 'src/domain/x.ts', to: 'src/model/y.ts' }, none), null);
    assert.equal(breach({ from: 'web/x.ts', to: 'src/shared/y.ts' }, none), null);
    assert.ok(!pureLib.has('src/lib/json.ts'), 'src/lib/json.ts imports src/errors.ts: not pure');
  });

  test('no arrow runs up a floor or across the server/browser line, but the known ones', () => {
    const found: string[] = [];
    for (const list of arrows.values()) {
      for (const arrow of list) {
        const why = breach(arrow, pureLib);
        const name = `${arrow.from} -> ${arrow.to}`;
        if (why && !KNOWN.has(name)) found.push(`${name}: ${why}`);
      }
    }
    assert.deepEqual(found, [], 'new arrows against the layout');
  });

  test('every known exception still occurs (delete it once its file moved)', () => {
    const occurring = new Set([...arrows.values()].flat().map((a) => `${a.from} -> ${a.to}`));
    const stale = [...KNOWN.keys()].filter((name) => !occurring.has(name));
    assert.deepEqual(stale, []);
    for (const name of KNOWN.keys()) {
      const [from, to] = name.split(' -> ') as [string, string];
      assert.notEqual(breach({ from, to }, pureLib), null, `${name} breaks no rule: delete it from KNOWN`);
    }
  });
});

// Native addons inside the single executable. build.mjs embeds better-sqlite3's and argon2's `.node`
// files as SEA assets plus a manifest of their SHA-256 hashes. A shared library can only be loaded
// from a file, so on start each addon is written once to <dataDir>/native/<hash>/<name> (the data
// directory, because temp folders are often mounted noexec) and loaded with process.dlopen.
// Outside the executable (npm start, tests) loadNativeAddons returns {} and the packages load normally.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Asset keys, shared with build.mjs. */
export const NATIVE_ASSETS = {
  betterSqlite3: 'better_sqlite3.node',
  argon2: 'argon2.node',
  memory: 'memory.node',
} as const;
export const NATIVE_MANIFEST_ASSET = 'natives.json';

export type NativeName = keyof typeof NATIVE_ASSETS;
export type NativeAddons = { [K in NativeName]?: unknown };

type SeaModule = typeof import('node:sea');

// A dlopen'ed library belongs to the whole process and can be opened only once per process, so the
// loaded modules are kept here (the argon2 stand-in in ./argon2 reads them when first called).
const loaded: NativeAddons = {};
// The files they were loaded from: a worker thread loads a context-aware addon again from its file.
const loadedFiles: { [K in NativeName]?: string } = {};

/** node:sea when this process is the single executable, else null (node:sea is absent before 20.12). */
function seaModule(): SeaModule | null {
  const sea = process.getBuiltinModule?.('node:sea') as SeaModule | undefined;
  return sea && typeof sea.isSea === 'function' && sea.isSea() ? sea : null;
}

/** Writes every embedded addon under dataDir (once per content hash) and loads it. */
export function loadNativeAddons(dataDir: string): NativeAddons {
  const sea = seaModule();
  if (!sea) return {};
  const hashes = JSON.parse(sea.getAsset(NATIVE_MANIFEST_ASSET, 'utf8')) as Record<string, string>;
  const nativeDir = path.join(path.resolve(dataDir), 'native');
  const folders = new Set<string>();
  for (const [name, asset] of Object.entries(NATIVE_ASSETS) as [NativeName, string][]) {
    const hash = hashes[asset];
    if (!hash) throw new Error(`native addon ${asset} missing from the executable's manifest`);
    folders.add(hash.slice(0, 16));
    if (loaded[name] !== undefined) continue;
    const file = extractOnce(sea, asset, path.join(nativeDir, hash.slice(0, 16)));
    const mod = { exports: {} as unknown };
    process.dlopen(mod, file);
    loaded[name] = mod.exports;
    loadedFiles[name] = file;
  }
  removeOtherVersions(nativeDir, folders);
  return { ...loaded };
}

/** Addons left by earlier versions of the executable are never loaded again. */
function removeOtherVersions(nativeDir: string, keep: Set<string>): void {
  for (const entry of readdirSync(nativeDir)) {
    if (!keep.has(entry)) rmSync(path.join(nativeDir, entry), { recursive: true, force: true });
  }
}

/** The addon loaded by loadNativeAddons, or undefined before that (or outside the executable). */
export function loadedNativeAddon(name: NativeName): unknown {
  return loaded[name];
}

/** The file the addon was loaded from (for worker threads), or undefined outside the executable. */
export function loadedNativeAddonPath(name: NativeName): string | undefined {
  return loadedFiles[name];
}

function extractOnce(sea: SeaModule, asset: string, dir: string): string {
  const file = path.join(dir, asset);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  // Write beside, then rename: a second process starting at the same time never sees half a file.
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, new Uint8Array(sea.getAsset(asset)), { mode: 0o755 });
  renameSync(partial, file);
  return file;
}

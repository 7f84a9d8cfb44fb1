// The built web interface for tests: `npm test` builds it in pretest; a test file run by hand
// builds it here when it is missing or older than a file under web/ (so it never tests stale code).
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

export async function ensureWebBuilt(): Promise<void> {
  const manifest = path.resolve('.build', 'web', 'manifest.json');
  if (existsSync(manifest) && statSync(manifest).mtimeMs >= newestSource(path.resolve('web'))) return;
  // @ts-expect-error: a plain ES module of the build, without type declarations
  const { buildWeb } = (await import('../../build-web.mjs')) as { buildWeb: () => Promise<unknown> };
  await buildWeb();
}

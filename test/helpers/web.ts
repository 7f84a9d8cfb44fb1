// The built web interface for tests: `npm test` builds it in pretest; a single test file run by
// hand builds it here when it is missing.
import { existsSync } from 'node:fs';
import path from 'node:path';

export async function ensureWebBuilt(): Promise<void> {
  if (existsSync(path.resolve('.build', 'web', 'index.html'))) return;
  // @ts-expect-error: a plain ES module of the build, without type declarations
  const { buildWeb } = (await import('../../build-web.mjs')) as { buildWeb: () => Promise<unknown> };
  await buildWeb();
}

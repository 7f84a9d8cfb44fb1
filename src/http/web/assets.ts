// The built web interface (build-web.mjs): index.html, hashed assets and their .gz/.br copies,
// listed in manifest.json. Read from the executable's embedded assets, or from .build/web on disk
// (npm start builds it in prestart), once, on the first request for the interface.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { embeddedWebFiles } from '../../sea/web-assets';

export interface WebFile {
  body: Buffer;
  gzip: Buffer | null;
  brotli: Buffer | null;
  type: string;
}

export interface WebAssets {
  index: WebFile | null;
  /** index.html's text around the `<!--page-data-->` mark (build-web.mjs), when it has one */
  indexAround: [before: string, after: string] | null;
  /**
   * The CSP sources of index.html's inline scripts (`'sha256-…'`): web/boot.ts, which build-web.mjs
   * inlines. Only these run; any other inline script is refused.
   */
  inlineScripts: string[];
  /** a hashed asset by its URL path (`/assets/app.<hash>.js`) */
  asset(urlPath: string): WebFile | undefined;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

type Reader = (name: string) => Buffer | null;

function diskReader(dir: string): Reader {
  return (name) => {
    try {
      return readFileSync(path.join(dir, name));
    } catch {
      return null;
    }
  };
}

function loadFile(read: Reader, name: string): WebFile | null {
  const body = read(name);
  if (!body) return null;
  const type = TYPES[path.extname(name)] ?? 'application/octet-stream';
  return { body, gzip: read(`${name}.gz`), brotli: read(`${name}.br`), type };
}

export function loadWebAssets(dir: string): WebAssets {
  const read = embeddedWebFiles() ?? diskReader(dir);
  const manifestText = read('manifest.json');
  const names = manifestText
    ? Object.keys((JSON.parse(manifestText.toString('utf8')) as { files: object }).files)
    : [];
  const assets = new Map<string, WebFile>();
  for (const name of names) {
    if (!name.startsWith('assets/')) continue;
    const file = loadFile(read, name);
    if (file) assets.set(`/${name}`, file);
  }
  const index = names.includes('index.html') ? loadFile(read, 'index.html') : null;
  const html = index?.body.toString('utf8') ?? '';
  const at = html.indexOf(PAGE_DATA_MARK);
  return {
    index,
    indexAround: at < 0 ? null : [html.slice(0, at), html.slice(at + PAGE_DATA_MARK.length)],
    inlineScripts: inlineScriptHashes(html),
    asset: (p) => assets.get(p),
  };
}

const PAGE_DATA_MARK = '<!--page-data-->';

/** `'sha256-<base64>'` of each `<script>` without attributes (a classic inline script) in `html`. */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (m) => `'sha256-${createHash('sha256').update(m[1]!, 'utf8').digest('base64')}'`,
  );
}

/** Where `npm start` finds the built interface: .build/web under the working directory. */
export const defaultWebDir = (): string => path.resolve('.build', 'web');

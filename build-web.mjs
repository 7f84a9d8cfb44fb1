// The web interface's assets: web/main.tsx (Preact) and web/styles/*.css bundled by esbuild into
// content-hashed files, each precompressed with gzip and brotli, plus index.html naming them and
// manifest.json listing every file. `npm start` serves them from .build/web (its prestart runs
// this file); build.mjs embeds the same files in the executable. One inline script: web/boot.ts,
// a small classic script that starts a dashboard's reads while the page is still being parsed
// (before the stylesheet, which would hold it back, and long before the interface's module has
// downloaded); the server allows exactly that script by its SHA-256 in the Content-Security-Policy
// (src/http/web/assets.ts), and no other inline code runs. The `<!--page-data-->` mark is where
// the server puts a dashboard page's data for that script (src/http/web/page-data.ts).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

const ROOT = path.dirname(fileURLToPath(import.meta.url));
export const WEB_OUT = path.join(ROOT, '.build', 'web');

const hash = (data) => createHash('sha256').update(data).digest('hex').slice(0, 12);

async function bundle() {
  const result = await esbuild.build({
    entryPoints: [path.join(ROOT, 'web', 'main.tsx')],
    bundle: true,
    write: false,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
    outdir: 'out',
    loader: { '.css': 'css' },
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const css = result.outputFiles
    .filter((f) => f.path.endsWith('.css'))
    .map((f) => f.text)
    .join('\n');
  // web/boot.ts: a classic script, inlined in index.html (it runs as the parser reaches it, before
  // the module above has even downloaded), with only what the first reads need.
  const boot = await esbuild.build({
    entryPoints: [path.join(ROOT, 'web', 'boot.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  return { js: js.text, css, boot: boot.outputFiles[0].text };
}

/** Marks where the server puts a page's data block (src/http/web/serve.ts). */
export const PAGE_DATA_MARK = '<!--page-data-->';

function indexHtml(script, style, boot) {
  // Inline, its text must not end the element early nor open a comment the parser would follow.
  if (/<\/script|<!--/i.test(boot)) throw new Error('web/boot.ts: its bundle holds </script or <!--');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Metrics</title>
<link rel="icon" href="data:,">
${PAGE_DATA_MARK}
<script>${boot.trim()}</script>
<link rel="stylesheet" href="/assets/${style}">
<script type="module" src="/assets/${script}"></script>
</head>
<body><div id="app"></div></body>
</html>
`;
}

/** Writes the files and their .gz/.br beside them; returns the manifest (name -> sizes). */
export async function buildWeb(outDir = WEB_OUT) {
  const { js, css, boot } = await bundle();
  const script = `app.${hash(js)}.js`;
  const style = `app.${hash(css)}.css`;
  const files = {
    [`assets/${script}`]: js,
    [`assets/${style}`]: css,
    'index.html': indexHtml(script, style, boot),
  };
  // Written to a fresh folder and renamed into place: a server reading the old files never sees half a build.
  const staging = `${outDir}.${process.pid}.partial`;
  fs.rmSync(staging, { recursive: true, force: true });
  const manifest = { files: {} };
  for (const [name, text] of Object.entries(files)) {
    const raw = Buffer.from(text);
    const gz = gzipSync(raw, { level: 9 });
    const br = brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
    const file = path.join(staging, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, raw);
    fs.writeFileSync(`${file}.gz`, gz);
    fs.writeFileSync(`${file}.br`, br);
    manifest.files[name] = { bytes: raw.length, gzip: gz.length, brotli: br.length };
  }
  fs.writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const old = `${outDir}.${process.pid}.old`;
  try {
    fs.renameSync(outDir, old);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  try {
    fs.renameSync(staging, outDir);
  } catch (err) {
    // Another build (a parallel test file) put its folder in place first: the same sources, so keep it.
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    fs.rmSync(staging, { recursive: true, force: true });
  }
  fs.rmSync(old, { recursive: true, force: true });
  return manifest;
}

/** Every file of a built web folder, relative names (for the executable's assets). */
export function listWebFiles(outDir = WEB_OUT) {
  const out = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(path.relative(outDir, full));
    }
  };
  walk(outDir);
  return out.sort();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const manifest = await buildWeb();
  const js = Object.entries(manifest.files).find(([name]) => /assets\/app\.[0-9a-f]+\.js$/.test(name));
  const index = manifest.files['index.html'];
  console.log(
    `web: built in ${Date.now() - started} ms; ${js[0]} ${js[1].bytes} bytes, ${js[1].gzip} gzipped; ` +
      `index.html with web/boot.ts inline ${index.bytes} bytes, ${index.gzip} gzipped`,
  );
}

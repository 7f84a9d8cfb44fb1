// The command line: parse argv, load config, start the server, handle signals.
// The only module that touches process.* (exit codes, signals, stdout).
import { setFlagsFromString } from 'node:v8';
import { loadConfig, ConfigError, type Config } from './config';
import { parseArgs, UsageError, USAGE } from './cli';
import { diskFull, diskFullLine, startServer, type RunningServer } from './server';
import { loadNativeAddons, loadedNativeAddonPath, type NativeAddons } from './sea/natives';
import { allocatorSettings, trimAllocatorEvery, tuneAllocator } from './sea/memory';
import { SERVER_VERSION } from './version';
import { createLogger } from './lib/log';
import { exampleConfig } from './config-example';
import {
  backupDatabase,
  clusterModeBackupRefusal,
  OpsError,
  restoreDatabase,
  type Progress,
} from './ops/backup';
import { listenFailure } from './ops/start-failures';
import { DemoError } from './demo/setup';
import {
  demoBanner,
  prepareDemo,
  removeDemoDataDir,
  runDemo,
  type DemoDataDir,
  type RunningDemo,
} from './demo/run';

/** One line on stderr and the exit code: start-up failures never print a stack (SPEC section 11). */
function fail(message: string, code = 1): never {
  process.stderr.write(`service: ${message}\n`);
  process.exit(code);
}

/** How often the executable hands the allocator's free memory back to the system (src/sea/memory.ts). */
const TRIM_MS = 1000;

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** A progress line redrawn in place on a terminal; nothing when stderr is a file or a pipe. */
function progressLine(label: string): (p: Progress) => void {
  if (!process.stderr.isTTY) return () => {};
  let last = -1;
  return ({ copiedPages, totalPages }) => {
    const percent = totalPages === 0 ? 100 : Math.floor((copiedPages / totalPages) * 100);
    if (percent === last) return;
    last = percent;
    process.stderr.write(
      `\r${label}: ${percent}% (${copiedPages} of ${totalPages} pages)${percent === 100 ? '\n' : ''}`,
    );
  };
}

async function backup(config: Config, to: string, nativeBinding: unknown): Promise<void> {
  const result = await backupDatabase(config.storage.dataDir, to, {
    nativeBinding,
    onProgress: progressLine('backup'),
  });
  process.stdout.write(
    `backup written to ${result.file} (${mib(result.bytes)} in ${(result.ms / 1000).toFixed(1)} s)\n`,
  );
}

function restore(config: Config, from: string, nativeBinding: unknown): void {
  const result = restoreDatabase(config.storage.dataDir, from, nativeBinding);
  const moved = result.previous ? `; the database it replaced is now ${result.previous}` : '';
  process.stdout.write(
    `restored ${from} into ${config.storage.dataDir} (schema version ${result.schemaVersion})${moved}\n`,
  );
}

/** `service migrate` (ops/migrate.ts, loaded here only: it brings the PostgreSQL client). */
async function migrateCommand(
  config: Config,
  args: { to?: string; from?: string },
  nativeBinding: unknown,
): Promise<void> {
  const { migrateFromPostgres, migrateToPostgres } = await import('./ops/migrate');
  const options = {
    nativeBinding,
    print: (line: string) => void process.stdout.write(`${line}\n`),
    secretKeyConfigured: config.secrets.key !== null,
  };
  if (args.from !== undefined) await migrateFromPostgres(args.from, args.to!, options);
  else await migrateToPostgres(config.storage.dataDir, args.to!, options);
}

async function serve(
  config: Config,
  natives: NativeAddons,
  demoData: DemoDataDir | null,
  allocator?: string,
): Promise<void> {
  // Resident size over peak speed, for a service that shares a small machine: V8 lets the heap grow
  // to up to 4x its live size between full collections; 2.5x keeps a loaded server 20-40 MB
  // smaller for a few more (mostly concurrent) collections. Not 2x: with a live heap of 15-20 MB
  // that leaves less room before the limit than the young generation could promote, and V8 then
  // starts a full collection after every few scavenges (under the narrow batch workload one every
  // 100 ms, a third of the event loop's rate). V8 reads this at every collection.
  setFlagsFromString('--heap-growing-percent=150');
  // --max-semi-space-size (npm start, the executable's execArgv) sized this thread's young
  // generation; V8 would apply it to every isolate created later too, over the threads' own
  // resourceLimits (embedded/writer-client.ts, domain/metrics/ingest/batch-parser.ts): 16 MB of new space each instead of a few.
  setFlagsFromString('--max-semi-space-size=0');
  const log = createLogger(config.log.level);
  let server: RunningServer | null = null;
  let demo: RunningDemo | null = null;
  let stopping: string | null = null;
  const close = (running: RunningServer) =>
    Promise.resolve(demo?.stop())
      .then(() => running.close())
      .then(
        () => process.exit(0),
        (err) => {
          log.error('shutdown failed', { error: (err as Error)?.stack ?? String(err) });
          process.exit(1);
        },
      );
  const stop = (signal: string) => {
    // Ctrl-C under `npm start` arrives twice (from the terminal and forwarded by npm): one stop.
    if (stopping) return;
    stopping = signal;
    log.info('stopping', { signal });
    if (server) void close(server);
  };
  // Installed before the `listening on` line: a signal sent as soon as that line is seen must
  // find them (a signal during start-up stops the server once it is up).
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    server = await startServer(config, {
      nativeBinding: natives.betterSqlite3,
      nativeBindingPath: loadedNativeAddonPath('betterSqlite3'),
      log,
      allocator,
    });
  } catch (err) {
    const full = diskFull(err, config.storage.dataDir)
      ? `failed to start: ${diskFullLine(err, config.storage.dataDir, 'the database cannot be opened')}`
      : null;
    fail(listenFailure(err, config) ?? full ?? `failed to start: ${(err as Error)?.message ?? String(err)}`);
  }
  process.stdout.write(`listening on ${server.url}\n`);
  if (stopping) return void close(server);
  if (demoData) await startDemo(server, demoData, (running) => (demo = running));
}

/** `service demo`: fills the fresh server through its API, then prints where to sign in. */
async function startDemo(
  server: RunningServer,
  data: DemoDataDir,
  started: (demo: RunningDemo) => void,
): Promise<void> {
  let demo: RunningDemo;
  try {
    demo = await runDemo(server.url, (err) => process.stderr.write(`service: demo feed: ${err.message}\n`));
  } catch (err) {
    await server.close();
    fail(err instanceof DemoError ? err.message : `demo failed: ${(err as Error)?.message ?? String(err)}`);
  }
  started(demo);
  process.stdout.write(`${demoBanner(demo, data)}\n`);
}

async function main(argv: string[]): Promise<void> {
  let args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`service: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (args.command === 'help') return void process.stdout.write(`${USAGE}\n`);
  if (args.command === 'version') return void process.stdout.write(`service ${SERVER_VERSION}\n`);
  if (args.command === 'config') return void process.stdout.write(exampleConfig());

  let demoData: DemoDataDir | null = null;
  if (args.command === 'demo') {
    try {
      demoData = prepareDemo(args.flags, process.env.SERVICE_LOG_LEVEL !== undefined);
    } catch (err) {
      if (!(err instanceof DemoError)) throw err;
      fail(err.message, 2);
    }
    // Whatever ends the process (a failed start, a signal), a temp data directory goes with it.
    const data = demoData;
    process.once('exit', () => removeDemoDataDir(data));
  }

  let config;
  try {
    config = loadConfig({ flags: args.flags, configFile: args.configFile });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    fail(err.message);
  }
  if ((args.command === 'backup' || args.command === 'restore') && config.storage.url !== null)
    fail(clusterModeBackupRefusal(args.command), 2);
  const natives = loadNativeAddons(config.storage.dataDir);
  try {
    if (args.command === 'backup') return await backup(config, args.to!, natives.betterSqlite3);
    if (args.command === 'restore') return restore(config, args.from!, natives.betterSqlite3);
    if (args.command === 'migrate') return await migrateCommand(config, args, natives.betterSqlite3);
  } catch (err) {
    if (err instanceof OpsError) fail(err.message);
    fail(`${args.command} failed: ${(err as Error)?.message ?? String(err)}`);
  }
  // Before the server starts its threads: each would otherwise take an arena of its own.
  const allocator = tuneAllocator(natives.memory, process.env) ? allocatorSettings() : undefined;
  if (allocator) trimAllocatorEvery(natives.memory, TRIM_MS);
  await serve(config, natives, demoData, allocator);
}

main(process.argv.slice(2)).catch((err) =>
  fail(`failed to start: ${(err as Error)?.message ?? String(err)}`),
);

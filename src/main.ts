// The command line: parse argv, load config, start the server, handle signals.
// The only module that touches process.* (exit codes, signals, stdout).
import { setFlagsFromString } from 'node:v8';
import { loadConfig, ConfigError } from './config';
import { parseArgs, UsageError, USAGE } from './cli';
import { startServer } from './server';
import { loadNativeAddons } from './sea/natives';
import { SERVER_VERSION } from './version';
import { DemoError } from './demo/setup';
import { demoBanner, prepareDemo, removeDemoDataDir, runDemo, type DemoDataDir, type RunningDemo } from './demo/run';

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

  let demoData: DemoDataDir | null = null;
  if (args.command === 'demo') {
    try {
      demoData = prepareDemo(args.flags, process.env.SERVICE_LOG_LEVEL !== undefined);
    } catch (err) {
      if (!(err instanceof DemoError)) throw err;
      process.stderr.write(`service: ${err.message}\n`);
      process.exit(2);
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
    process.stderr.write(`service: ${err.message}\n`);
    process.exit(1);
  }
  // Resident size over peak speed, for a service that shares a small machine: V8 lets the heap grow
  // to up to 4x its live size between full collections; 2x keeps a loaded server about 20-40 MB
  // smaller for a few more (mostly concurrent) collections. V8 reads this at every collection.
  setFlagsFromString('--heap-growing-percent=100');
  const natives = loadNativeAddons(config.storage.dataDir);
  const server = await startServer(config, { nativeBinding: natives.betterSqlite3 });
  process.stdout.write(`listening on ${server.url}\n`);

  let demo: RunningDemo | null = null;
  const stop = (signal: string) => {
    process.stderr.write(`service: ${signal} received, shutting down\n`);
    Promise.resolve(demo?.stop())
      .then(() => server.close())
      .then(
        () => process.exit(0),
        (err) => {
          process.stderr.write(`service: shutdown failed: ${(err as Error).stack}\n`);
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  if (demoData) {
    try {
      demo = await runDemo(server.url, (err) => process.stderr.write(`service: demo feed: ${err.message}\n`));
    } catch (err) {
      process.stderr.write(`service: ${err instanceof DemoError ? err.message : (err as Error).stack}\n`);
      await server.close();
      process.exit(1);
    }
    process.stdout.write(`${demoBanner(demo, demoData)}\n`);
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`service: failed to start: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});

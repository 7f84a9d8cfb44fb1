// Command-line parsing: `service [serve] [--config FILE] [--host H] [--port N] [--data DIR]`,
// `service demo [...]`, `service version`, `service help`, `service config`, `service backup --to FILE`,
// `service restore --from FILE`, `service migrate --to postgres://…` and
// `service migrate --from postgres://… --to DIR`. Pure, so it is unit-tested; main.ts acts on the result.

export type Command = 'serve' | 'demo' | 'version' | 'help' | 'config' | 'backup' | 'restore' | 'migrate';
const COMMANDS: readonly string[] = [
  'serve',
  'demo',
  'version',
  'help',
  'config',
  'backup',
  'restore',
  'migrate',
];

export interface CliArgs {
  command: Command;
  configFile?: string;
  /** flag values by config key */
  flags: Record<string, string>;
  /** backup: the file to write; migrate: the PostgreSQL URL, or with `from` the directory */
  to?: string;
  /** restore: the backup to put in place; migrate: the PostgreSQL URL to read */
  from?: string;
}

export class UsageError extends Error {}

const FLAG_KEYS: Record<string, string> = {
  '--host': 'server.host',
  '--port': 'server.port',
  '--data': 'storage.data_dir',
};

export const USAGE = `Usage:
  service [serve] [--config FILE] [--host HOST] [--port PORT] [--data DIR]
  service demo [--port PORT] [--data DIR]
  service backup --to FILE [--config FILE] [--data DIR]
  service restore --from FILE [--config FILE] [--data DIR]
  service migrate --to postgres://USER@HOST/DB [--config FILE] [--data DIR]
  service migrate --from postgres://USER@HOST/DB --to DIR
  service config
  service version
  service help

Commands:
  serve          run the server (the default)
  demo           run the server on a fresh data directory (a new temp folder unless --data names an
                 empty one) filled with a web shop's 30 days of metrics and two dashboards, and print
                 where to sign in
  backup         copy the database to FILE while the service runs (a consistent SQLite online backup)
  restore        check FILE and put it in place as the database; the service must be stopped
  migrate        copy the data directory (every table, every project's metrics) into an empty
                 PostgreSQL database for cluster mode, or back into an empty directory; checks
                 the counts and sums and prints them; the service must be stopped
  config         print the example configuration (every key, its variable and default)

Options:
  --config FILE  TOML configuration file (default: ./config.toml when present)
  --host HOST    address to listen on (default 127.0.0.1; env SERVICE_HOST)
  --port PORT    port to listen on, 0 picks a free one (default 4000; env SERVICE_PORT)
  --data DIR     data directory holding service.db (default ./data; env SERVICE_DATA_DIR)

Every setting is also read from SERVICE_* environment variables; \`service config\` prints them all.`;

export function parseArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = { command: 'serve', flags: {} };
  let i = 0;
  const first = argv[0];
  if (first !== undefined && !first.startsWith('-')) {
    if (!COMMANDS.includes(first)) throw new UsageError(`unknown command: ${first}`);
    args.command = first as Command;
    i = 1;
  }
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      args.command = 'help';
      continue;
    }
    if (arg === '--version' || arg === '-v') {
      args.command = 'version';
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const own =
      (name === '--to' && (args.command === 'backup' || args.command === 'migrate')) ||
      (name === '--from' && (args.command === 'restore' || args.command === 'migrate'));
    if (name !== '--config' && !own && !(name in FLAG_KEYS)) throw new UsageError(`unknown option: ${name}`);
    let value: string | undefined;
    if (eq > 0) value = arg.slice(eq + 1);
    else value = argv[++i];
    if (value === undefined || value === '') throw new UsageError(`option ${name} needs a value`);
    if (name === '--config') args.configFile = value;
    else if (name === '--to') args.to = value;
    else if (name === '--from') args.from = value;
    else args.flags[FLAG_KEYS[name]!] = value;
  }
  if (args.command === 'backup' && !args.to) throw new UsageError('backup needs --to FILE');
  if (args.command === 'restore' && !args.from) throw new UsageError('restore needs --from FILE');
  if (args.command === 'migrate') checkMigrate(args);
  return args;
}

const isPostgresUrl = (text: string) => /^postgres(ql)?:\/\//i.test(text);

function checkMigrate(args: CliArgs): void {
  if (!args.to) throw new UsageError('migrate needs --to postgres://… (or --from postgres://… --to DIR)');
  if (args.from === undefined) {
    if (!isPostgresUrl(args.to)) throw new UsageError('migrate --to takes a postgres:// URL');
    return;
  }
  if (!isPostgresUrl(args.from)) throw new UsageError('migrate --from takes a postgres:// URL');
  if (isPostgresUrl(args.to)) throw new UsageError('migrate --from postgres://… --to takes a directory');
  if (args.flags['storage.data_dir'] !== undefined)
    throw new UsageError('migrate --from writes the directory given by --to; --data does not apply');
}

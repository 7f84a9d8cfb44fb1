// Command-line parsing: `service [serve] [--config FILE] [--host H] [--port N] [--data DIR]`,
// `service demo [...]`, `service version`, `service help`. Pure, so it is unit-tested; main.ts acts on the result.

export type Command = 'serve' | 'demo' | 'version' | 'help';

export interface CliArgs {
  command: Command;
  configFile?: string;
  /** flag values by config key */
  flags: Record<string, string>;
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
  service version
  service help

demo starts the service on a fresh data directory (a new temp folder unless --data names an empty
one) filled with a web shop's 30 days of metrics and two dashboards, and prints where to sign in.

Options:
  --config FILE  TOML configuration file (default: ./config.toml when present)
  --host HOST    address to listen on (default 127.0.0.1; env SERVICE_HOST)
  --port PORT    port to listen on, 0 picks a free one (default 4000; env SERVICE_PORT)
  --data DIR     data directory holding service.db (default ./data; env SERVICE_DATA_DIR)

Every setting is also read from SERVICE_* environment variables; see config.example.toml.`;

export function parseArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = { command: 'serve', flags: {} };
  let i = 0;
  const first = argv[0];
  if (first !== undefined && !first.startsWith('-')) {
    if (first !== 'serve' && first !== 'demo' && first !== 'version' && first !== 'help') {
      throw new UsageError(`unknown command: ${first}`);
    }
    args.command = first;
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
    if (name !== '--config' && !(name in FLAG_KEYS)) throw new UsageError(`unknown option: ${name}`);
    let value: string | undefined;
    if (eq > 0) value = arg.slice(eq + 1);
    else value = argv[++i];
    if (value === undefined || value === '') throw new UsageError(`option ${name} needs a value`);
    if (name === '--config') args.configFile = value;
    else args.flags[FLAG_KEYS[name]!] = value;
  }
  return args;
}

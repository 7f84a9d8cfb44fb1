// The command line: argument parsing (pure) and the exit codes of the real entry point.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs, UsageError, USAGE } from '../../src/cli';

const ROOT = path.join(import.meta.dirname, '..', '..');

function runMain(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}

describe('parseArgs', () => {
  test('no arguments and `serve` both serve with no flags', () => {
    assert.deepEqual(parseArgs([]), { command: 'serve', flags: {} });
    assert.deepEqual(parseArgs(['serve']), { command: 'serve', flags: {} });
  });

  test('flags map to config keys, as `--flag value` or `--flag=value`', () => {
    assert.deepEqual(
      parseArgs([
        'serve',
        '--host',
        '0.0.0.0',
        '--port=8080',
        '--data',
        '/var/lib/svc',
        '--config=conf.toml',
      ]),
      {
        command: 'serve',
        configFile: 'conf.toml',
        flags: { 'server.host': '0.0.0.0', 'server.port': '8080', 'storage.data_dir': '/var/lib/svc' },
      },
    );
    assert.deepEqual(parseArgs(['--port', '0']), { command: 'serve', flags: { 'server.port': '0' } });
  });

  test('a value may contain "=" and the last repeated flag wins', () => {
    assert.equal(parseArgs(['--data=/a=b']).flags['storage.data_dir'], '/a=b');
    assert.equal(parseArgs(['--port', '1', '--port', '2']).flags['server.port'], '2');
  });

  test('backup --to, restore --from and config', () => {
    assert.deepEqual(parseArgs(['backup', '--to', 'b.db', '--data', 'd']), {
      command: 'backup',
      to: 'b.db',
      flags: { 'storage.data_dir': 'd' },
    });
    assert.deepEqual(parseArgs(['restore', '--from=b.db']), { command: 'restore', from: 'b.db', flags: {} });
    assert.equal(parseArgs(['config']).command, 'config');
    assert.throws(() => parseArgs(['backup']), /backup needs --to FILE/);
    assert.throws(() => parseArgs(['restore', '--to', 'x']), UsageError);
    assert.throws(() => parseArgs(['--from', 'x']), UsageError);
  });

  test('migrate --to postgres://…, and --from postgres://… --to DIR', () => {
    const url = 'postgres://svc@db1.internal:5432/service';
    assert.deepEqual(parseArgs(['migrate', '--to', url, '--data', 'd']), {
      command: 'migrate',
      to: url,
      flags: { 'storage.data_dir': 'd' },
    });
    assert.deepEqual(parseArgs(['migrate', `--from=${url}`, '--to', 'back']), {
      command: 'migrate',
      from: url,
      to: 'back',
      flags: {},
    });
    const refused: [string[], RegExp][] = [
      [['migrate'], /migrate needs --to postgres:\/\//],
      [['migrate', '--to', 'dir'], /migrate --to takes a postgres:\/\/ URL/],
      [['migrate', '--from', 'file.db', '--to', 'dir'], /migrate --from takes a postgres:\/\/ URL/],
      [['migrate', '--from', url, '--to', url], /--to takes a directory/],
      [['migrate', '--from', url, '--to', 'dir', '--data', 'd'], /--data does not apply/],
      [['migrate', '--from', url], /migrate needs --to/],
    ];
    for (const [argv, message] of refused) {
      assert.throws(
        () => parseArgs(argv),
        (err: unknown) => err instanceof UsageError && message.test(err.message),
        argv.join(' '),
      );
    }
    assert.ok(USAGE.includes('service migrate --from postgres://'));
  });

  test('version and help, as commands or flags', () => {
    assert.equal(parseArgs(['version']).command, 'version');
    assert.equal(parseArgs(['help']).command, 'help');
    assert.equal(parseArgs(['--version']).command, 'version');
    assert.equal(parseArgs(['-v']).command, 'version');
    assert.equal(parseArgs(['serve', '--help']).command, 'help');
    assert.equal(parseArgs(['-h']).command, 'help');
  });

  test('unknown commands, unknown flags and missing values are usage errors naming them', () => {
    const cases: [string[], RegExp][] = [
      [['start'], /unknown command: start/],
      [['--bogus'], /unknown option: --bogus/],
      [['serve', '--prot', '1'], /unknown option: --prot/],
      [['--port'], /option --port needs a value/],
      [['--port='], /option --port needs a value/],
      [['--config'], /option --config needs a value/],
      [['-p', '1'], /unknown option: -p/],
    ];
    for (const [argv, message] of cases) {
      assert.throws(
        () => parseArgs(argv),
        (err: unknown) => err instanceof UsageError && message.test(err.message),
        argv.join(' '),
      );
    }
  });

  test('the usage text lists every command and flag', () => {
    for (const word of ['serve', 'version', 'help', '--config', '--host', '--port', '--data'])
      assert.ok(USAGE.includes(word), word);
  });
});

describe('service entry point', () => {
  test('an unknown flag prints a clear message and the usage, exit code 2', () => {
    const res = runMain(['--bogus']);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /unknown option: --bogus/);
    assert.match(res.stderr, /Usage:/);
  });

  test('version and help exit 0 on stdout', () => {
    const version = runMain(['version']);
    assert.equal(version.status, 0);
    assert.match(version.stdout, /^service \d+\.\d+\.\d+/);
    const help = runMain(['help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Usage:/);
  });

  test('a bad configuration value stops start-up with exit 1 naming the key', () => {
    const res = runMain(['--port', 'http']);
    assert.equal(res.status, 1);
    assert.match(res.stderr, /server\.port/);
    const env = runMain([], { SERVICE_PROJECTS_ENABLED: 'perhaps' });
    assert.equal(env.status, 1);
    assert.match(env.stderr, /features\.projects_enabled.*SERVICE_PROJECTS_ENABLED/);
  });
});

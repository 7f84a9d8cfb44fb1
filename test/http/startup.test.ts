// Start-up failures (SPEC section 11) as one line and exit 1, through the real entry point, and
// the commands that need no server: config, help.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, runCli, startService } from '../helpers/process';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-start-'));
  dirs.push(dir);
  return dir;
};

/** stderr holds exactly one line, and no stack trace. */
function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, stderr);
  assert.doesNotMatch(stderr, /\n\s+at |Error:/);
  return lines[0]!;
}

describe('start-up failures and commands', () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('a busy port names server.port and --port, exit 1, no EADDRINUSE stack', async () => {
    const first = await startService(['--port', '0', '--data', tempDir()]);
    try {
      const port = new URL(first.url).port;
      const res = runCli(['--port', port, '--data', tempDir()]);
      assert.equal(res.status, 1);
      const line = oneLine(res.stderr);
      assert.match(line, new RegExp(`port ${port} is in use`));
      assert.match(line, /server\.port/);
      assert.match(line, /--port/);
      assert.doesNotMatch(line, /EADDRINUSE/);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });

  test('a wrong-typed value names the key and the expected type; a section given as a value says so', () => {
    const cwd = tempDir();
    const cases: Array<[string, RegExp]> = [
      ['[server]\nport = "http"\n', /server\.port .*expected a whole number, got a string \("http"\)/],
      ['[server]\nhost = 3\n', /server\.host .*expected a non-empty string, got a number \(3\)/],
      ['[features]\nprojects_enabled = "perhaps"\n', /features\.projects_enabled .*expected true\/false/],
      [
        'server = 3\n',
        /invalid value for server .*expected a \[server\] table of settings, got a number \(3\)/,
      ],
    ];
    for (const [toml, expected] of cases) {
      writeFileSync(path.join(cwd, 'config.toml'), toml);
      const res = runCli(['--data', path.join(cwd, 'data')], {}, cwd);
      assert.equal(res.status, 1, toml);
      assert.match(oneLine(res.stderr), expected);
      assert.doesNotMatch(res.stderr, /unknown config key/);
    }
    const env = runCli(['--data', path.join(cwd, 'data')], { SERVICE_PORT: 'eighty' }, tempDir());
    assert.equal(env.status, 1);
    assert.match(oneLine(env.stderr), /server\.port \(env SERVICE_PORT\): expected a whole number/);
  });

  test('service config prints the example configuration; help points at it, not at a file', () => {
    const res = runCli(['config'], {}, tempDir());
    assert.equal(res.status, 0);
    assert.equal(res.stdout, readFileSync(path.join(ROOT, 'config.example.toml'), 'utf8'));
    const help = runCli(['help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /service config/);
    assert.doesNotMatch(help.stdout, /config\.example\.toml/);
    for (const word of ['backup --to FILE', 'restore --from FILE'])
      assert.ok(help.stdout.includes(word), word);
  });

  test('backup and restore without their file are usage errors (exit 2)', () => {
    assert.equal(runCli(['backup']).status, 2);
    assert.equal(runCli(['restore']).status, 2);
    assert.equal(runCli(['serve', '--to', 'x']).status, 2);
  });
});

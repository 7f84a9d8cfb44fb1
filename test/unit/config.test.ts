// Configuration: defaults -> TOML -> SERVICE_* env -> flags, and every bad value names its key.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONFIG_KEYS, ConfigError, loadConfig } from '../../src/config';

const dirs: string[] = [];
function tempDir(toml?: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
  dirs.push(dir);
  if (toml !== undefined) writeFileSync(path.join(dir, 'config.toml'), toml);
  return dir;
}

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.message;
  }
  assert.fail('expected a ConfigError');
}

describe('config', () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('defaults, with paths resolved against the working directory', () => {
    const cwd = tempDir();
    const config = loadConfig({ env: {}, cwd });
    assert.deepEqual(config, {
      server: {
        host: '127.0.0.1',
        port: 4000,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 5_000,
        bodyBytesInFlight: 8_388_608,
        trustProxy: false,
      },
      storage: { dataDir: path.join(cwd, 'data'), answerCacheBytes: 33_554_432, url: null },
      cluster: { leaseMs: 30_000 },
      deployment: { mode: 'self_hosted' },
      features: { projectsEnabled: true, registrationEnabled: true },
      limits: {
        maxBodyBytes: 1_048_576,
        sqliteUploadMaxBytes: 104_857_600,
        writeQueueMaxPoints: 100_000,
        sqliteSourceTimeoutMs: 5000,
        sqliteIdleCloseMs: 60_000,
      },
      sources: { sqliteRoot: path.join(cwd, 'data', 'sources') },
      log: { level: 'info' },
      secrets: { key: null },
      metrics: { enabled: true, token: null },
      retention: { sweepIntervalSeconds: 60 },
      alerts: { intervalMs: 60_000 },
      session: { idleTimeoutSeconds: 604_800, maxLifetimeSeconds: 2_592_000 },
      intake: { listeners: [], maxKeysPerSource: 100_000 },
      network: {
        outbound: 'any',
        allowedHosts: [],
        timeoutMs: 5000,
        maxDatabaseSources: 50,
        setupsPerMinute: 10,
      },
      smtp: { host: null, port: 587, tls: 'starttls', username: null, password: null, from: null },
      clusters: [],
    });
  });

  test('the config object is frozen all the way down', () => {
    const config = loadConfig({ env: {}, cwd: tempDir() });
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.server));
    assert.throws(() => {
      (config.server as { port: number }).port = 1;
    }, TypeError);
  });

  test('./config.toml is read when present; every section and native TOML types', () => {
    const cwd = tempDir(`
[server]
host = "0.0.0.0"
port = 8080
[storage]
data_dir = "state"
[deployment]
mode = "saas"
[features]
projects_enabled = false
registration_enabled = false
[limits]
max_body_bytes = 2048
sqlite_upload_max_bytes = 4096
write_queue_max_points = 10
sqlite_source_timeout_ms = 250
sqlite_idle_close_ms = 1000
[sources]
sqlite_root = "/srv/sqlite"
[log]
level = "warn"
`);
    const config = loadConfig({ env: {}, cwd });
    assert.deepEqual([config.server.host, config.server.port], ['0.0.0.0', 8080]);
    assert.equal(config.storage.dataDir, path.join(cwd, 'state'));
    assert.equal(config.deployment.mode, 'saas');
    assert.deepEqual(config.features, { projectsEnabled: false, registrationEnabled: false });
    assert.deepEqual(config.limits, {
      maxBodyBytes: 2048,
      sqliteUploadMaxBytes: 4096,
      writeQueueMaxPoints: 10,
      sqliteSourceTimeoutMs: 250,
      sqliteIdleCloseMs: 1000,
    });
    assert.equal(config.sources.sqliteRoot, '/srv/sqlite');
    assert.equal(config.log.level, 'warn');
  });

  test('--config names the file (relative to the working directory) instead of ./config.toml', () => {
    const cwd = tempDir('[server]\nport = 1111\n');
    writeFileSync(path.join(cwd, 'other.toml'), '[server]\nport = 2222\n');
    assert.equal(loadConfig({ env: {}, cwd, configFile: 'other.toml' }).server.port, 2222);
    assert.equal(loadConfig({ env: {}, cwd }).server.port, 1111);
  });

  test('precedence: defaults < TOML < environment < flags; an empty variable counts as unset', () => {
    const cwd = tempDir('[server]\nport = 5000\nhost = "10.0.0.1"\n');
    const env = { SERVICE_PORT: '6000' };
    assert.equal(loadConfig({ env: {}, cwd }).server.port, 5000);
    assert.equal(loadConfig({ env, cwd }).server.port, 6000);
    assert.equal(loadConfig({ env, cwd, flags: { 'server.port': '7000' } }).server.port, 7000);
    assert.equal(loadConfig({ env: { SERVICE_PORT: '' }, cwd }).server.port, 5000);
    assert.equal(loadConfig({ env, cwd }).server.host, '10.0.0.1');
    assert.equal(loadConfig({ env: { SERVICE_HOST: '::1' }, cwd }).server.host, '::1');
    const data = loadConfig({
      env: { SERVICE_DATA_DIR: 'env-data' },
      cwd,
      flags: { 'storage.data_dir': 'flag-data' },
    });
    assert.equal(data.storage.dataDir, path.join(cwd, 'flag-data'));
    assert.equal(data.sources.sqliteRoot, path.join(cwd, 'flag-data', 'sources'));
  });

  test('port 0 is allowed (pick a free port)', () => {
    assert.equal(loadConfig({ env: { SERVICE_PORT: '0' }, cwd: tempDir() }).server.port, 0);
  });

  test('SERVICE_* booleans: 1,true,yes,on / 0,false,no,off in any case', () => {
    const cwd = tempDir();
    for (const raw of ['1', 'true', 'yes', 'on', 'TRUE', ' On ', 'Yes']) {
      assert.equal(
        loadConfig({ env: { SERVICE_PROJECTS_ENABLED: raw }, cwd }).features.projectsEnabled,
        true,
        raw,
      );
    }
    for (const raw of ['0', 'false', 'no', 'off', 'FALSE', 'No', ' OFF']) {
      assert.equal(
        loadConfig({ env: { SERVICE_REGISTRATION_ENABLED: raw }, cwd }).features.registrationEnabled,
        false,
        raw,
      );
    }
  });

  test('every bad value from the environment stops with a message naming the key and the variable', () => {
    const bad: Record<string, string[]> = {
      'server.host': ['   '],
      'server.port': ['abc', '70000', '-1', '1.5', '65536'],
      'server.headers_timeout_ms': ['99', 'soon'],
      'server.request_timeout_ms': ['0', '-1'],
      'server.keep_alive_timeout_ms': ['1.5'],
      'server.body_bytes_in_flight': ['65535', 'lots'],
      'server.trust_proxy': ['sometimes'],
      'storage.data_dir': [' '],
      'storage.write_log': ['sometimes'],
      'storage.answer_cache_bytes': ['-1', '32M', '1.5'],
      'storage.url': ['mysql://db/x', 'postgres://db', 'not a url'],
      'cluster.lease_ms': ['99', '45001', '30s', '1.5', '-1'],
      'deployment.mode': ['cloud', 'SAAS'],
      'features.projects_enabled': ['maybe', '2'],
      'features.registration_enabled': ['enabled'],
      'limits.max_body_bytes': ['1023', 'big', '-5'],
      'limits.sqlite_upload_max_bytes': ['10', '1e9'],
      'limits.write_queue_max_points': ['0', 'many'],
      'limits.sqlite_source_timeout_ms': ['9', 'soon'],
      'limits.sqlite_idle_close_ms': ['99', '1.5'],
      'sources.sqlite_root': ['  '],
      'log.level': ['verbose'],
      'secrets.key': ['short', 'g'.repeat(64)],
      'metrics.enabled': ['sometimes'],
      'metrics.token': ['  '],
      'retention.sweep_interval_seconds': ['0', 'hourly'],
      'session.idle_timeout_seconds': ['59', 'a week'],
      'session.max_lifetime_seconds': ['0', '-1'],
      'intake.listeners': [
        '{',
        '{}',
        '[{"protocol":"graphite","transport":"udp","listen":"127.0.0.1:2003","source":"nope"}]',
      ],
      'intake.max_keys_per_source': ['0', '1000001', 'many', '1.5'],
      'network.outbound': ['private'],
      'network.allowed_hosts': ['10.0.0.0/99', 'a host', 'db.example/8'],
      'network.timeout_ms': ['10'],
      'network.max_database_sources': ['0'],
      'network.setups_per_minute': ['0'],
      'alerts.interval': ['0s', '60', 'often', '25h'],
      'smtp.host': ['  ', 'smtp example.com'],
      'smtp.port': ['abc', '70000'],
      'smtp.tls': ['yes', 'STARTTLS'],
      'smtp.username': [' '],
      'smtp.password': [' '],
      'smtp.from': [' ', 'not an address'],
    };
    const cwd = tempDir();
    for (const def of CONFIG_KEYS) {
      const values = bad[def.key];
      assert.ok(values, `a bad value is listed for ${def.key}`);
      for (const value of values) {
        const message = configError(() => loadConfig({ env: { [def.env]: value }, cwd }));
        assert.ok(message.includes(def.key), `${def.key}=${value}: ${message}`);
        assert.ok(message.includes(def.env), `${def.env}=${value}: ${message}`);
      }
    }
  });

  test('server.body_bytes_in_flight below limits.max_body_bytes stops with a message naming both', () => {
    const message = configError(() =>
      loadConfig({
        env: { SERVICE_BODY_BYTES_IN_FLIGHT: '1000000', SERVICE_MAX_BODY_BYTES: '2000000' },
        cwd: tempDir(),
      }),
    );
    assert.match(message, /server\.body_bytes_in_flight.*limits\.max_body_bytes/);
  });

  test('bad values in TOML and flags name the key too', () => {
    const cwd = tempDir('[server]\nport = "http"\n');
    assert.match(
      configError(() => loadConfig({ env: {}, cwd })),
      /server\.port \(config file\): expected a whole number, got a string \("http"\)/,
    );
    const bool = tempDir('[features]\nprojects_enabled = "perhaps"\n');
    assert.match(
      configError(() => loadConfig({ env: {}, cwd: bool })),
      /features\.projects_enabled/,
    );
    const host = tempDir('[server]\nhost = ""\n');
    assert.match(
      configError(() => loadConfig({ env: {}, cwd: host })),
      /server\.host/,
    );
    const list = tempDir('[limits]\nmax_body_bytes = [1, 2]\n');
    assert.match(
      configError(() => loadConfig({ env: {}, cwd: list })),
      /limits\.max_body_bytes/,
    );
    assert.match(
      configError(() => loadConfig({ env: {}, cwd: tempDir(), flags: { 'server.port': 'x' } })),
      /server\.port \(flag\)/,
    );
  });

  test('unknown TOML keys, invalid TOML and a missing file are refused by name', () => {
    assert.match(
      configError(() => loadConfig({ env: {}, cwd: tempDir('[server]\nhots = "x"\n') })),
      /unknown config key server\.hots/,
    );
    assert.match(
      configError(() => loadConfig({ env: {}, cwd: tempDir('[cache]\nsize = 1\n') })),
      /unknown config key cache\.size/,
    );
    assert.match(
      configError(() => loadConfig({ env: {}, cwd: tempDir('port = 4000\n') })),
      /unknown config key port/,
    );
    // A known section given as a value says what it should be, not "unknown key".
    const section = configError(() => loadConfig({ env: {}, cwd: tempDir('server = 3\n') }));
    assert.match(
      section,
      /invalid value for server .*expected a \[server\] table of settings, got a number \(3\)/,
    );
    assert.match(
      configError(() => loadConfig({ env: {}, cwd: tempDir('[server\nport = 1') })),
      /not valid TOML/,
    );
    assert.match(
      configError(() => loadConfig({ env: {}, cwd: tempDir(), configFile: 'missing.toml' })),
      /cannot read config file .*missing\.toml/,
    );
  });

  test('config.example.toml loads and documents every key with its variable', () => {
    const example = path.join(import.meta.dirname, '..', '..', 'config.example.toml');
    const text = readFileSync(example, 'utf8');
    loadConfig({ env: {}, cwd: tempDir(), configFile: example });
    for (const def of CONFIG_KEYS) {
      const name = def.key.split('.')[1]!;
      assert.ok(text.includes(name), `${def.key} documented`);
      assert.ok(text.includes(def.env), `${def.env} documented`);
    }
  });
});

describe('metrics clusters', () => {
  const ID = '5B0C2D8E-7A41-4C55-9E3F-0A1B2C3D4E5F';
  test('[[clusters]] in TOML, SERVICE_CLUSTERS (a JSON array) over it; ids lower-cased', () => {
    const cwd = tempDir();
    writeFileSync(
      path.join(cwd, 'config.toml'),
      `[[clusters]]\nid = "${ID}"\nurl = "postgres://svc@db1.internal:5432/metrics"\n`,
    );
    assert.deepEqual(loadConfig({ env: {}, cwd }).clusters, [
      { id: ID.toLowerCase(), url: 'postgres://svc@db1.internal:5432/metrics', mergeWindowMs: 20 },
    ]);
    const env = {
      SERVICE_CLUSTERS: JSON.stringify([{ id: ID, url: 'postgresql://db2/m', merge_window_ms: 0 }]),
    };
    assert.deepEqual(loadConfig({ env, cwd }).clusters, [
      { id: ID.toLowerCase(), url: 'postgresql://db2/m', mergeWindowMs: 0 },
    ]);
    writeFileSync(
      path.join(cwd, 'config.toml'),
      `[[clusters]]\nid = "${ID}"\nurl = "postgres://db1/m"\nmerge_window_ms = 200\n`,
    );
    assert.equal(loadConfig({ env: {}, cwd }).clusters[0]!.mergeWindowMs, 200);
    assert.deepEqual(loadConfig({ env: {}, cwd: tempDir() }).clusters, []);
  });

  test('a bad entry stops start-up with a message naming clusters, the entry and the field', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ id: ID, url: 'postgres://db/m' }, /expected an array/],
      [[{ id: 'cluster-1', url: 'postgres://db/m' }], /cluster 1: id must be a UUID/],
      [[{ id: ID, url: 'mysql://db/m' }], /cluster 1: url must start with postgres/],
      [[{ id: ID, url: 'postgres://db' }], /cluster 1: url must name a database/],
      [[{ id: ID, url: 'postgres://db/m', pool: 3 }], /cluster 1: unknown key pool/],
      [[{ id: ID, url: 'postgres://db/m', merge_window_ms: -1 }], /cluster 1: merge_window_ms must be/],
      [[{ id: ID, url: 'postgres://db/m', merge_window_ms: 2.5 }], /cluster 1: merge_window_ms must be/],
      [[{ id: ID, url: 'postgres://db/m', merge_window_ms: '50' }], /cluster 1: merge_window_ms must be/],
      [[{ id: ID, url: 'postgres://db/m', merge_window_ms: 5000 }], /from 0 to 1000/],
      [
        [
          { id: ID, url: 'postgres://db/m' },
          { id: ID.toLowerCase(), url: 'postgres://db/n' },
        ],
        /cluster 2: id .* is given twice/,
      ],
    ];
    for (const [value, message] of cases) {
      const text = configError(() =>
        loadConfig({ env: { SERVICE_CLUSTERS: JSON.stringify(value) }, cwd: tempDir() }),
      );
      assert.match(text, /invalid value for clusters \(env SERVICE_CLUSTERS\)/);
      assert.match(text, message);
    }
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'config.toml'), 'clusters = 3\n');
    assert.match(
      configError(() => loadConfig({ env: {}, cwd })),
      /clusters \(config file\): expected an array/,
    );
  });

  test('config.example.toml documents [[clusters]] and SERVICE_CLUSTERS', () => {
    const text = readFileSync(path.join(import.meta.dirname, '..', '..', 'config.example.toml'), 'utf8');
    assert.match(text, /^# \[\[clusters\]\]$/m);
    assert.ok(text.includes('SERVICE_CLUSTERS'));
    assert.match(text, /^# merge_window_ms = 20$/m);
  });
});

describe('network settings', () => {
  test('outbound defaults to any in self_hosted and public in saas; allowed_hosts from TOML or a comma list', () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
    assert.equal(loadConfig({ env: {}, cwd }).network.outbound, 'any');
    assert.equal(loadConfig({ env: { SERVICE_DEPLOYMENT_MODE: 'saas' }, cwd }).network.outbound, 'public');
    assert.equal(
      loadConfig({ env: { SERVICE_DEPLOYMENT_MODE: 'saas', SERVICE_NETWORK_OUTBOUND: 'any' }, cwd }).network
        .outbound,
      'any',
    );
    const listed = loadConfig({
      env: { SERVICE_NETWORK_ALLOWED_HOSTS: 'db.internal, 10.1.2.0/24,::1' },
      cwd,
    });
    assert.deepEqual(listed.network.allowedHosts, ['db.internal', '10.1.2.0/24', '::1']);
    writeFileSync(
      path.join(cwd, 'config.toml'),
      '[network]\noutbound = "public"\nallowed_hosts = ["127.0.0.1/32"]\n',
    );
    assert.deepEqual(loadConfig({ env: {}, cwd }).network, {
      outbound: 'public',
      allowedHosts: ['127.0.0.1/32'],
      timeoutMs: 5000,
      maxDatabaseSources: 50,
      setupsPerMinute: 10,
    });
  });
});

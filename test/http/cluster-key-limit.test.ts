// intake.max_keys_per_source for a project on a metrics cluster (docs/cluster.md "The intake's key
// limit", src/intake/key-limit.ts): the project's key set is seeded from its schema at the first
// intake write after a start, so a restart keeps the count; two nodes writing the same project see
// each other's keys once their sets are refreshed. Against a scratch database of the local
// PostgreSQL (one cluster), skipped without one. The two nodes are two servers started on copies
// of one data directory (the same project, token and cluster), as nodes of cluster mode share them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config';
import { startServer, type RunningServer } from '../../src/server';
import { createLogger } from '../../src/lib/log';
import { keyLimitOf } from '../../src/intake/key-limit';
import { createProjectWithToken, type ProjectAgent } from '../helpers/server';
import { SERVERS, scratchDatabase, skipReason } from '../drivers/network';

const skip = skipReason('postgres');
const CLUSTER = '6c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5';
const LIMIT = 50;
/** the refresh interval the nodes of the second test use (15 s by default) */
const REFRESH_MS = 400;
const T = Math.floor(Date.now() / 1000); // now: the buckets a refresh reads hold it

const schemaOf = (projectId: string) => `svc_project_${projectId.replace(/-/g, '')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the intake key limit of a project on a metrics cluster', { skip }, () => {
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  let client: pg.Client;
  let env: Record<string, string>;
  const dirs: string[] = [];
  const running = new Set<RunningServer>();

  async function startAt(dataDir: string): Promise<RunningServer> {
    const config = loadConfig({
      env: { SERVICE_DATA_DIR: dataDir, SERVICE_PORT: '0', SERVICE_LOG_LEVEL: 'silent', ...env },
      cwd: dataDir,
    });
    const server = await startServer(config, { log: createLogger('silent') });
    running.add(server);
    return server;
  }

  async function stop(server: RunningServer): Promise<void> {
    running.delete(server);
    await server.close();
  }

  const newDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-cluster-keys-'));
    dirs.push(dir);
    return dir;
  };

  before(async () => {
    db = await scratchDatabase('postgres');
    const url = `postgres://postgres@${SERVERS.postgres.host}:${SERVERS.postgres.port}/${db.name}`;
    env = {
      SERVICE_CLUSTERS: JSON.stringify([{ id: CLUSTER, url }]),
      SERVICE_INTAKE_MAX_KEYS_PER_SOURCE: String(LIMIT),
    };
    client = new pg.Client({ ...SERVERS.postgres, database: db.name });
    await client.connect();
  });

  after(async () => {
    for (const server of running) await server.close();
    await client?.end();
    await db?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function write(server: RunningServer, who: ProjectAgent, hosts: string[]) {
    const body = hosts.map((h) => `m,host=${h} v=1 ${T}`).join('\n');
    const res = await fetch(`${server.url}/api/v2/write?precision=s`, {
      method: 'POST',
      headers: { authorization: `Token ${who.sourceToken}` },
      body,
    });
    const text = await res.text();
    return { status: res.status, text, json: text === '' ? undefined : JSON.parse(text) };
  }

  const hosts = (prefix: string, from: number, n: number) =>
    Array.from({ length: n }, (_, i) => `${prefix}${from + i}`);

  async function storedKeys(who: ProjectAgent): Promise<number> {
    const { rows } = await client.query(
      `SELECT count(DISTINCT key)::int AS n FROM "${schemaOf(who.sourceId)}".trifle_stats WHERE key LIKE 'm,host=%'`,
    );
    return rows[0].n;
  }

  test('a restart keeps the count: 40 keys, then 10 new ones are accepted and the 11th refused', async () => {
    const dir = newDir();
    const first = await startAt(dir);
    const who = await createProjectWithToken(first, { project_cluster_id: CLUSTER });
    assert.equal((await write(first, who, hosts('h', 0, 40))).status, 204);
    assert.equal(keyLimitOf(first.deps).keysOf(who.sourceId), 40);
    await stop(first);

    const again = await startAt(dir);
    assert.equal(keyLimitOf(again.deps).keysOf(who.sourceId), null, 'nothing read before the first write');
    const statuses: number[] = [];
    for (const host of hosts('h', 40, 11)) statuses.push((await write(again, who, [host])).status);
    assert.deepEqual(statuses, [...Array(10).fill(204), 400]);

    // refused as the intake refuses past the limit (test/http/intake-key-limit.test.ts)
    const refused = await write(again, who, ['h0', 'h50']);
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.json.code, 'invalid');
    assert.match(
      refused.json.message,
      /holds 50 keys and this write would add 1 new ones \(the first: "m,host=h50"\), over the limit of 50 keys per source \(intake\.max_keys_per_source\)/,
    );
    assert.equal((await write(again, who, hosts('h', 0, 50))).status, 204, 'existing keys go on');
    assert.equal(await storedKeys(who), 50);
    await stop(again);
  });

  test("two nodes on one cluster project: after a refresh each counts the other's keys", async () => {
    const dirA = newDir();
    const setup = await startAt(dirA);
    const who = await createProjectWithToken(setup, { project_cluster_id: CLUSTER });
    await stop(setup);
    const dirB = newDir();
    cpSync(dirA, dirB, { recursive: true });
    const a = await startAt(dirA);
    const b = await startAt(dirB);
    keyLimitOf(a.deps).refreshMs = REFRESH_MS;
    keyLimitOf(b.deps).refreshMs = REFRESH_MS;

    assert.equal((await write(b, who, hosts('b', 0, 5))).status, 204);
    assert.equal((await write(a, who, hosts('a', 0, 30))).status, 204);
    assert.equal(keyLimitOf(a.deps).keysOf(who.sourceId), 35, "a's seed read b's keys");
    assert.equal(keyLimitOf(b.deps).keysOf(who.sourceId), 5, 'b has not read since');

    await sleep(REFRESH_MS + 50);
    // b's set is older than the interval: this write waits for the refresh, which finds a's keys
    assert.equal((await write(b, who, ['b0'])).status, 204);
    assert.equal(keyLimitOf(b.deps).keysOf(who.sourceId), 35);
    const refused = await write(b, who, hosts('b', 5, 16));
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.json.message, /holds 35 keys and this write would add 16 new ones/);
    assert.equal((await write(b, who, hosts('b', 5, 15))).status, 204);

    await sleep(REFRESH_MS + 50);
    const late = await write(a, who, ['a30']);
    assert.equal(late.status, 400, late.text);
    assert.match(late.json.message, /holds 50 keys and this write would add 1 new ones/);
    assert.equal(await storedKeys(who), 50);
    await stop(a);
    await stop(b);
  });
});

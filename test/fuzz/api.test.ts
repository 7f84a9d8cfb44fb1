// Fuzz test (issue 9): 10,500 random and mutated requests across every endpoint, against one real
// server, seeded so every run sends the same requests. No answer may be a 5xx other than 503/507,
// none may hang, and afterwards the server is healthy and an ordinary write and read work.
// FUZZ_SEED and FUZZ_RUNS change the seed and the count (e.g. for a longer local run).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fc from 'fast-check';
import {
  createProjectWithToken,
  request,
  startTestServer,
  signupWithOrganization,
  type TestServer,
} from '../helpers/server';
import { LONG_EXTENSION, fuzzRequests, type FuzzRequest } from './generators';
import { seedFiles } from './sqlite-files';
import { upload } from '../helpers/databases';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_500);
const CONCURRENCY = 8;
const TIMEOUT_MS = 20_000;
const AT = '2026-01-24T10:00:00Z';

interface Pools {
  source: string[];
  database: string[];
  dashboard: string[];
  group: string[];
  /** source tokens minted during the run, with their source */
  minted: Array<{ token: string; source: string }>;
}

let server: TestServer;
const tokens: Record<string, string> = {};
let ownSource = '';
/** source id -> what is hostile about its file */
const hostileSources = new Map<string, string>();
let otherSource = '';
const pools: Pools = { source: [], database: [], dashboard: [], group: [], minted: [] };

const seeds = seedFiles();

before(async () => {
  server = await startTestServer();
  const owner = await createProjectWithToken(server);
  const other = await createProjectWithToken(server);
  ownSource = owner.sourceId;
  otherSource = other.sourceId;
  tokens.user = owner.userToken;
  tokens.otherUser = other.userToken;
  tokens.rw = owner.sourceToken;
  for (const [name, read, write] of [
    ['ro', true, false],
    ['wo', false, true],
    ['noFlags', false, false],
  ] as const) {
    const t = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'project', source_id: ownSource, read, write },
      { token: owner.userToken },
    );
    tokens[name] = t.body.data.token.value;
  }
  const db = await request(
    server,
    'POST',
    '/api/v1/bootstrap/databases',
    { display_name: 'Fuzz store', driver: 'sqlite', file_path: 'fuzz-store.sqlite' },
    { token: owner.userToken },
  );
  const dbId = db.body.data.source.id as string;
  await request(server, 'POST', `/api/v1/bootstrap/databases/${dbId}/setup`, {}, { token: owner.userToken });
  const dash = await request(
    server,
    'POST',
    '/api/v1/dashboards',
    { name: 'D', key: 'fuzz', source: { type: 'project', id: ownSource } },
    { token: owner.userToken },
  );
  const group = await request(
    server,
    'POST',
    '/api/v1/dashboard-groups',
    { name: 'G' },
    { token: owner.userToken },
  );
  // Sources on uploaded files, hostile ones included, each with a token, so metrics calls reach them.
  for (const [n, seed] of seeds.entries()) {
    const up = await upload(
      server,
      owner.userToken,
      { display_name: `Seed ${n}`, driver: 'sqlite' },
      { name: `seed-${n}.sqlite`, bytes: seed.bytes },
    );
    if (up.status !== 201) continue;
    const id = up.body.data.source.id as string;
    await request(server, 'POST', `/api/v1/bootstrap/databases/${id}/setup`, {}, { token: owner.userToken });
    const t = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'database', source_id: id },
      { token: owner.userToken },
    );
    if (t.status === 201) pools.minted.push({ token: t.body.data.token.value, source: id });
    if (seed.hostile) hostileSources.set(id, seed.label);
    pools.database.push(id);
  }
  pools.source.push(ownSource, otherSource, dbId);
  pools.database.push(dbId);
  pools.dashboard.push(dash.body.data.id);
  pools.group.push(group.body.data.id);
  pools.minted.push({ token: owner.sourceToken, source: ownSource });
});
after(() => server?.stop());

const pick = (list: string[], i: number) => list[i % list.length] ?? '00000000-0000-4000-8000-000000000000';

function fill(text: string, i: number): string {
  return text
    .replaceAll('{source}', pick(pools.source, i))
    .replaceAll('{database}', pick(pools.database, i))
    .replaceAll('{dashboard}', pick(pools.dashboard, i))
    .replaceAll('{group}', pick(pools.group, i))
    .replaceAll('{n}', String(i));
}

function headersOf(req: FuzzRequest, i: number): Record<string, string> {
  const headers: Record<string, string> = { ...req.headers };
  const minted = pools.minted[i % pools.minted.length]!;
  const token = req.auth === 'junk' ? null : req.auth === 'minted' ? minted.token : tokens[req.auth];
  if (req.auth === 'junk') headers.authorization = req.junkAuth;
  else if (token) headers.authorization = `Bearer ${token}`;
  const own = req.auth === 'minted' ? minted.source : ownSource;
  const source = { none: null, own, other: otherSource, junk: 'not-a-uuid', upper: own.toUpperCase() }[
    req.source
  ];
  if (source) headers['x-service-source-id'] = source;
  return headers;
}

interface Answer {
  status: number | 'hang' | 'client-error';
  text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function send(req: FuzzRequest, i: number): Promise<Answer> {
  const minted = pools.minted[i % pools.minted.length]!;
  const hostile = req.auth === 'minted' ? hostileSources.get(minted.source) : undefined;
  if (hostile && !req.known) req.known = `${HOSTILE_FILE}: ${hostile}`;
  const plainJson =
    req.body &&
    !req.headers['content-encoding'] &&
    !String(req.headers['content-type']).startsWith('multipart/');
  const body = plainJson ? Buffer.from(fill(req.body!.toString('latin1'), i), 'latin1') : req.body;
  return new Promise((resolve) => {
    let client: http.ClientRequest;
    try {
      const url = new URL(fill(req.path, i), server.url);
      const headers = headersOf(req, i);
      // Node's client sends a GET/DELETE/OPTIONS body without a length unless told the length.
      if (body) headers['content-length'] = String(body.length);
      client = http.request(url, { method: req.method, headers, agent, timeout: TIMEOUT_MS });
    } catch (err) {
      return resolve({ status: 'client-error', text: String(err) }); // a request Node refuses to send
    }
    client.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', () => resolve({ status: res.statusCode ?? 0, text: '' }));
    });
    client.on('timeout', () => {
      client.destroy();
      resolve({ status: 'hang', text: '' });
    });
    client.on('error', (err) => resolve({ status: 'client-error', text: String(err) }));
    client.end(body);
  });
}

/** Ids of what a request created, so later requests reach real objects. */
function harvest(req: FuzzRequest, answer: Answer): void {
  if (answer.status !== 201) return;
  let data: Record<string, any>;
  try {
    data = JSON.parse(answer.text).data;
  } catch {
    return;
  }
  const keep = <T>(list: T[], value: T | undefined) =>
    value !== undefined && list.push(value) > 40 && list.splice(1, 1);
  if (req.path.startsWith('/api/v1/dashboards')) keep(pools.dashboard, data.id);
  else if (req.path.startsWith('/api/v1/dashboard-groups')) keep(pools.group, data.id);
  else if (req.path.startsWith('/api/v1/bootstrap/projects')) keep(pools.source, data.source?.id);
  else if (req.path.startsWith('/api/v1/bootstrap/source-tokens') && typeof data.token?.value === 'string') {
    keep(pools.minted, { token: data.token.value, source: data.token.source_id });
  } else if (req.path === '/api/v1/bootstrap/databases' && data.source?.driver === 'sqlite') {
    keep(pools.database, data.source.id);
    keep(pools.source, data.source.id);
  }
}

test(
  `fuzz: ${RUNS} seeded random and mutated requests, no 5xx but 503/507, no hang`,
  { timeout: 110_000 },
  async () => {
    const requests = fc.sample(fuzzRequests(seeds), { seed: SEED, numRuns: RUNS });
    const statuses = new Map<string, number>();
    const failures: string[] = [];
    const knownFailures: string[] = [];
    const reasons = new Map<string, number>();
    const clientErrors = new Map<string, number>();
    const started = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const i = next++;
        const req = requests[i]!;
        const answer = await send(req, i);
        statuses.set(String(answer.status), (statuses.get(String(answer.status)) ?? 0) + 1);
        if (answer.status === 'client-error')
          clientErrors.set(answer.text.slice(0, 60), (clientErrors.get(answer.text.slice(0, 60)) ?? 0) + 1);
        const bad =
          answer.status === 'hang' ||
          (typeof answer.status === 'number' &&
            answer.status >= 500 &&
            answer.status !== 503 &&
            answer.status !== 507);
        const line = `#${i} ${req.kind} -> ${req.method} ${req.path.slice(0, 120)} => ${answer.status} ${answer.text.slice(0, 200)}`;
        if (bad && req.known) reasons.set(req.known, (reasons.get(req.known) ?? 0) + 1);
        if (bad) (req.known ? knownFailures : failures).push(req.known ? `${line} (${req.known})` : line);
        harvest(req, answer);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const figures = [...statuses]
      .sort()
      .map(([s, n]) => `${s}:${n}`)
      .join(' ');
    console.log(`fuzz: seed ${SEED}, ${requests.length} requests in ${seconds} s; statuses ${figures}`);
    console.log(`fuzz: not sent by Node's client: ${JSON.stringify([...clientErrors])}`);
    knownResult = knownFailures;
    if (reasons.size > 0) console.log(`fuzz: known findings of other areas: ${JSON.stringify([...reasons])}`);
    assert.deepEqual(failures.slice(0, 15), [], `${failures.length} requests answered 5xx or hung`);
  },
);

// Findings first seen in the SQLite-source code (a long upload extension, hostile source files) are
// counted apart, so a regression there names itself; there must be none.
const HOSTILE_FILE = 'a metrics call on a source whose uploaded file is hostile answers 500';
let knownResult: string[] = [];
test(`fuzz: known findings of other areas (${LONG_EXTENSION}; ${HOSTILE_FILE})`, () => {
  assert.deepEqual(knownResult.slice(0, 5), [], `${knownResult.length} requests`);
});

test('after the fuzz: healthy, and an ordinary write and read work', async () => {
  assert.equal((await request(server, 'GET', '/api/v1/health')).status, 200);
  const fresh = await createProjectWithToken(server);
  const as = { token: fresh.sourceToken, sourceId: fresh.sourceId };
  const write = await request(
    server,
    'POST',
    '/api/v1/metrics',
    { key: 'after', at: AT, values: { n: 3 } },
    as,
  );
  assert.equal(write.status, 201, write.text);
  const read = await request(
    server,
    'GET',
    `/api/v1/metrics?key=after&from=${AT}&to=${AT}&granularity=1h`,
    undefined,
    as,
  );
  assert.deepEqual([read.status, read.body.data.values], [200, [{ n: 3 }]]);
  const org = await signupWithOrganization(server);
  assert.ok(org.userToken);
  agent.destroy();
});

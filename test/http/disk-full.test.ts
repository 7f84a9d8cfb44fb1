// A full disk (SPEC 9): writes answer 507 {"errors":{"detail":"Insufficient storage"}}, reads keep
// working, and writes recover once space is free. Issue 9: a full disk answered a generic 500.
// Runs on a small tmpfs holding the data directory; skipped (with the reason) where mounting one
// is not allowed.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createProjectWithToken, request, startTestServer, type ProjectAgent, type TestServer } from '../helpers/server';
import { createDashboard, dashboardBody, setupOrganization } from '../helpers/dashboards';

const FULL = { errors: { detail: 'Insufficient storage' } };
const mountPoint = mkdtempSync(path.join(os.tmpdir(), 'disk-full-'));

function tryMount(): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', mountPoint], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return `cannot mount a tmpfs here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()}): disk-full test skipped`;
  }
}

const skip = tryMount();

/** Fills the file system with one file; returns its path. */
function fillDisk(): string {
  const filler = path.join(mountPoint, 'filler');
  const fd = openSync(filler, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, block);
  } catch {
    // ENOSPC: full; now the last small blocks too
    const small = Buffer.alloc(512, 1);
    try {
      for (;;) writeSync(fd, small);
    } catch {
      /* full */
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

describe('a full disk', { skip: skip ?? false }, () => {
  let server: TestServer;
  let agent: ProjectAgent;
  const at = '2026-01-24T10:00:00Z';
  const range = `from=${at}&to=${at}&granularity=1h`;

  before(async () => {
    server = await startTestServer({ SERVICE_DATA_DIR: path.join(mountPoint, 'data') });
    agent = await createProjectWithToken(server);
  });
  after(async () => {
    await server.stop();
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  const as = () => ({ token: agent.sourceToken, sourceId: agent.sourceId });

  test('writes answer 507, reads keep working, writes recover once space is free', async () => {
    assert.equal((await request(server, 'POST', '/api/v1/metrics', { key: 'disk', at, values: { n: 1 } }, as())).status, 201);
    const org = await setupOrganization(server);
    const filler = fillDisk();

    // Distinct keys and many leaves, so each write needs new pages.
    let answer;
    for (let i = 0; i < 200; i++) {
      const values = Object.fromEntries(Array.from({ length: 500 }, (_, j) => [`leaf_${i}_${j}`, j]));
      answer = await request(server, 'POST', '/api/v1/metrics', { key: `fill-${i}`, at, values }, as());
      if (answer.status !== 201) break;
    }
    assert.deepEqual([answer!.status, answer!.body], [507, FULL]);
    const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', { email: `full-${Date.now()}@example.com`, password: 'long enough', organization_name: `Full ${Date.now()}` });
    assert.ok([201, 507].includes(signup.status), `signup on a full disk: ${signup.status} ${signup.text}`);
    const dash = await request(server, 'POST', '/api/v1/dashboards', dashboardBody(org, { payload: { notes: 'x'.repeat(200_000) } }), { token: org.userToken });
    assert.ok([201, 507].includes(dash.status), `dashboard on a full disk: ${dash.status} ${dash.text}`);

    const read = await request(server, 'GET', `/api/v1/metrics?key=disk&${range}`, undefined, as());
    assert.deepEqual([read.status, read.body.data.values], [200, [{ n: 1 }]], 'reads keep working');
    assert.equal((await request(server, 'GET', '/api/v1/health')).status, 200);
    assert.equal((await request(server, 'GET', '/api/v1/dashboards', undefined, { token: org.userToken })).status, 200);

    rmSync(filler);
    const again = await request(server, 'POST', '/api/v1/metrics', { key: 'disk', at, values: { n: 1 } }, as());
    assert.equal(again.status, 201, again.text);
    const after = await request(server, 'GET', `/api/v1/metrics?key=disk&${range}`, undefined, as());
    assert.deepEqual(after.body.data.values, [{ n: 2 }], 'the write after recovery landed once');
    await createDashboard(server, org.userToken, dashboardBody(org));
  });
});

if (skip) test('disk-full test', { skip }, () => {});

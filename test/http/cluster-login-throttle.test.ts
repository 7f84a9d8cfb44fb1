// The login throttle across nodes (issue 25 point 4, docs/cluster.md "The login throttle table"):
// three servers in cluster mode on one storage.url share the `login_throttle` table, so wrong
// passwords spread over them get the allowance of one node, not three times it. Against a scratch
// database of the local PostgreSQL; skipped without one.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, signupWithOrganization, startTestServer, type TestServer } from '../helpers/server';
import { pgSkip, scratchPgStore } from '../helpers/pg-store';
import { EMAIL_RULE } from '../../src/domain/login-throttle';

const LOGIN = '/api/v1/bootstrap/login';

describe('cluster mode: the login throttle holds across nodes', { skip: pgSkip() }, () => {
  test('120 wrong passwords spread over three nodes: the free attempts of one node are checked, the rest 429, the right one refused on every node', async () => {
    const scratch = await scratchPgStore();
    const env = { SERVICE_STORAGE_URL: scratch.url };
    const servers: TestServer[] = [];
    try {
      for (let i = 0; i < 3; i++) servers.push(await startTestServer(env));
      const victim = await signupWithOrganization(servers[0]!);
      const guesses = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          request(servers[i % 3]!, 'POST', LOGIN, { email: victim.email, password: `wrong guess ${i}` }),
        ),
      );
      const statuses = guesses.map((r) => r.status);
      assert.equal(
        statuses.filter((s) => s === 401).length,
        EMAIL_RULE.free,
        'the nodes together check as many passwords as one node would',
      );
      assert.equal(statuses.filter((s) => s === 429).length, 120 - EMAIL_RULE.free);
      assert.ok(!statuses.some((s) => s >= 500), 'no 5xx');
      for (const server of servers) {
        const right = await request(server, 'POST', LOGIN, {
          email: victim.email,
          password: victim.password,
        });
        assert.equal(right.status, 429, 'the right password is refused on every node while blocked');
        assert.match(right.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      }
    } finally {
      for (const s of servers) await s.stop();
      await scratch.drop();
    }
  });
});

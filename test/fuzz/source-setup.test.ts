// Fuzz test (issue 20): database source setups of every network driver against random hostile
// servers on 127.0.0.1, seeded. A server sends random chunks (bytes, frame headers claiming
// lengths of 0, 1, 15, 16, 2^30, -1, ... in both byte orders, a MariaDB greeting, an HTTP answer)
// on connect or in answer to the client, and then closes, goes silent or keeps sending. Every
// setup must answer 422 with a failure class (never 5xx, never the remote's bytes) within its
// deadline, and health must answer throughout. FUZZ_SEED and SOURCE_FUZZ_RUNS change the seed
// and the count.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  request,
  signupWithOrganization,
  startTestServer,
  type Agent,
  type TestServer,
} from '../helpers/server';
import { DATABASES, setupPath } from '../helpers/databases';
import { listen, mariadbGreeting } from '../http/hostile-listeners';

const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const RUNS = Number(process.env.SOURCE_FUZZ_RUNS ?? 16);
const TIMEOUT_MS = 300;
const DRIVERS = ['postgres', 'mysql', 'redis', 'mongo'] as const;
const MARKER = 'REMOTE-MARKER';
const CLASSES =
  /^(postgres|mysql|redis|mongo): (could not connect to the server|not a (PostgreSQL|MySQL or MariaDB|Redis|MongoDB) server|authentication failed|timed out|the server refused the setup|permission denied|the database does not exist)$/;

const header = fc
  .tuple(
    fc.constantFrom(0, 1, 4, 15, 16, 17, 0xffffff, 1 << 30, -1, 0x7fffffff),
    fc.boolean(),
    fc.constantFrom(0, 1, 2012, 2013, 0x52, 10),
  )
  .map(([length, little, code]) => {
    const b = Buffer.alloc(16);
    if (little) b.writeInt32LE(length, 0);
    else b.writeInt32BE(length, 0);
    b.writeInt32LE(code, 12);
    return b;
  });
const chunk = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((a) => Buffer.from(a)),
  header,
  fc.constant(mariadbGreeting()),
  fc.constant(Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: 13\r\n\r\n${MARKER}`)),
  fc.constant(Buffer.from(`-ERR ${MARKER}\r\n`)),
  fc.constant(Buffer.from(`R\0\0\0\x08\0\0\0\x03${MARKER}`, 'latin1')),
);
const behaviour = fc.record({
  chunks: fc.array(chunk, { minLength: 0, maxLength: 4 }),
  onConnect: fc.boolean(),
  then: fc.constantFrom('close', 'silent', 'flood'),
});

let server: TestServer;
let agent: Agent;
before(async () => {
  server = await startTestServer({
    SERVICE_NETWORK_TIMEOUT_MS: String(TIMEOUT_MS),
    SERVICE_NETWORK_SETUPS_PER_MINUTE: '100000',
    SERVICE_NETWORK_MAX_DATABASE_SOURCES: '100000',
  });
  agent = await signupWithOrganization(server);
  // the client libraries load on first use: loaded here, so that the deadlines measure setups
  const silent = await listen(() => undefined);
  await Promise.all(
    DRIVERS.map(async (driver) => {
      const created = await request(
        server,
        'POST',
        DATABASES,
        {
          display_name: 'w',
          driver,
          host: '127.0.0.1',
          port: silent.port,
          database_name: 'd',
          username: 'u',
        },
        { token: agent.userToken },
      );
      await request(server, 'POST', setupPath(created.body.data.source.id), undefined, {
        token: agent.userToken,
      });
    }),
  );
  await silent.stop();
});
after(() => server.stop());

test('source setups against random hostile servers: 422 with a failure class, in time, health answering', async () => {
  await fc.assert(
    fc.asyncProperty(behaviour, async (b) => {
      const listener = await listen((socket) => {
        let sent = false;
        const send = () => {
          if (sent && b.then !== 'flood') return;
          sent = true;
          for (const c of b.chunks) if (!socket.destroyed) socket.write(c);
          if (b.then === 'close') socket.end();
          if (b.then === 'flood') {
            const junk = Buffer.alloc(1 << 14, 0x2a);
            let left = 64;
            const pump = () => {
              while (left-- > 0 && !socket.destroyed)
                if (!socket.write(junk)) return void socket.once('drain', pump);
            };
            pump();
          }
        };
        if (b.onConnect) send();
        socket.on('data', send);
      });
      try {
        const answers = await Promise.all(
          DRIVERS.map(async (driver) => {
            const created = await request(
              server,
              'POST',
              DATABASES,
              {
                display_name: 'f',
                driver,
                host: '127.0.0.1',
                port: listener.port,
                database_name: 'd',
                username: 'u',
                password: 'p',
              },
              { token: agent.userToken },
            );
            assert.equal(created.status, 201, created.text);
            const t0 = Date.now();
            const res = await request(server, 'POST', setupPath(created.body.data.source.id), undefined, {
              token: agent.userToken,
            });
            return { driver, res, ms: Date.now() - t0 };
          }),
        );
        for (const { driver, res, ms } of answers) {
          if (process.env.SOURCE_FUZZ_VERBOSE) console.log(driver, ms, res.text);
          assert.equal(res.status, 422, `${driver}: ${res.text}`);
          assert.match(res.body.errors.setup[0], CLASSES, `${driver}: ${res.text}`);
          assert.ok(!res.text.includes(MARKER), res.text);
          assert.ok(ms < TIMEOUT_MS * 10 + 5000, `${driver}: ${ms} ms`);
        }
        const health = await request(server, 'GET', '/api/v1/health');
        assert.equal(health.status, 200);
      } finally {
        await listener.stop();
      }
    }),
    { seed: SEED, numRuns: RUNS, verbose: 1 },
  );
  assert.ok(process.memoryUsage().rss < 1024 * 1024 * 1024, `RSS ${process.memoryUsage().rss}`);
});

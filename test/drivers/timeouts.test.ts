// A server that accepts connections but never answers: every network store gives up within its
// time limit (5 s by default, shortened here) and answers 503 instead of hanging.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { AppError } from '../../src/errors';
import { createPostgresStore } from '../../src/drivers/network/postgres';
import { createMysqlStore } from '../../src/drivers/network/mysql';
import { createRedisStore } from '../../src/drivers/network/redis';
import { createMongoStore } from '../../src/drivers/network/mongo';
import type { WriteSetStore } from '../../src/drivers/types';
import { writeSet } from './helpers';

const LIMIT = 400;
const H = Date.UTC(2025, 0, 1);

describe('a server that never answers', () => {
  let silent: net.Server;
  let port: number;
  const sockets = new Set<net.Socket>();
  before(async () => {
    silent = net.createServer((s) => sockets.add(s.on('error', () => undefined)));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    port = (silent.address() as net.AddressInfo).port;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  });

  const settings = () => ({
    host: '127.0.0.1',
    port,
    database: 'd',
    username: 'u',
    timeZone: 'UTC',
    timeoutMs: LIMIT,
  });
  const stores: Array<[string, () => WriteSetStore]> = [
    ['postgres', () => createPostgresStore({ ...settings(), mode: 'full' })],
    ['mysql', () => createMysqlStore({ ...settings(), mode: 'full' })],
    ['redis', () => createRedisStore(settings())],
    ['mongo', () => createMongoStore({ ...settings(), mode: 'full' })],
  ];

  for (const [name, make] of stores) {
    test(`${name}: reads and writes answer 503 within the limit; setup 422 text`, async () => {
      const store = make();
      try {
        for (const call of [
          () => store.read({ sourceId: 's', key: 'k', granularity: '1h' }, [H]),
          () => store.apply(writeSet([{ key: 'k', granularity: '1h', at: H, add: { n: 1 } }])),
        ]) {
          const t0 = Date.now();
          await assert.rejects(
            call,
            (err: unknown) => err instanceof AppError && err.status === 503 && err.options.retryAfter === 5,
          );
          assert.ok(Date.now() - t0 < LIMIT * 4 + 1000, `${Date.now() - t0} ms`);
        }
        await assert.rejects(
          () => store.setup(),
          (err: Error) => err.message.startsWith(`${name}: `) && !err.message.includes('127.0.0.1'),
        );
      } finally {
        await store.close();
      }
    });
  }
});

// A damaged record set aside by the metric writer's replay (issue 27, docs/operations.md "A damaged
// write log"): a record whose checksum holds (the log's own recovery reads it whole) but whose
// content does not decode, a body that is not points or a head that is not a source's settings.
// The service starts; the records around it are replayed, each once; the damaged one is copied to
// a file beside its segment with a warning naming it; nothing stored before is lost; a later start
// replays nothing twice and warns no more. (Damage the log's recovery finds itself, a checksum
// that fails, a huge length, a NaN record number: test/drivers/embedded-log.test.ts.)
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { parsePoint } from '../../src/domain/metrics/ingest/points';
import { LogAppender, recoverLog } from '../../src/drivers/embedded/log';
import { encodePoints, wireToParts } from '../../src/model/point-wire';
import { createProjectWithToken, request, embeddedOnly } from '../helpers/server';
import { type ServiceProcess, startService } from '../helpers/process';

const root = mkdtempSync(path.join(os.tmpdir(), 'log-replay-'));
const data = path.join(root, 'data');
const started: ServiceProcess[] = [];
after(async () => {
  for (const s of started) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGKILL');
      await s.exited;
    }
  }
  rmSync(root, { recursive: true, force: true });
});

const AT = '2026-03-01T10:00:00Z';

async function start(): Promise<ServiceProcess> {
  const service = await startService(['--port', '0', '--data', data]);
  started.push(service);
  return service;
}

async function stop(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGTERM');
  const exit = await service.exited;
  assert.equal(exit.code, 0, service.stderr());
}

const logLines = (service: ServiceProcess) =>
  service
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test(
  'a record that reads whole but does not decode is set aside by the replay; the others are replayed once, nothing stored is lost',
  { timeout: 120_000, ...embeddedOnly("the embedded store's write log") },
  async () => {
    let service = await start();
    const agent = await createProjectWithToken(service);
    const as = { token: agent.sourceToken, sourceId: agent.sourceId };
    const readN = async (key: string) => {
      const read = await request(
        service,
        'GET',
        `/api/v1/metrics?key=${key}&from=${AT}&to=${AT}&granularity=1h`,
        undefined,
        as,
      );
      assert.equal(read.status, 200, read.text);
      return read.body.data.values[0]?.n;
    };
    for (let i = 0; i < 3; i++) {
      const answer = await request(
        service,
        'POST',
        '/api/v1/metrics',
        { key: 'kept', at: AT, values: { n: 1 } },
        as,
      );
      assert.equal(answer.status, 201, answer.text);
    }
    await stop(service); // folds what it acknowledged

    // As a crash between appends and a fold could leave it: records after the folded ones, one of
    // them whole (its checksum holds) but not decodable.
    const db = new Database(path.join(data, 'service.db'), { readonly: true });
    const folded = db
      .prepare('SELECT folded_up_to FROM metric_fold_state WHERE id = 1')
      .pluck()
      .get() as number;
    db.close();
    const { records, lastSeq } = recoverLog(data, 0);
    assert.ok(
      lastSeq >= 3 && folded === lastSeq,
      `every record folded at the stop (${folded} of ${lastSeq})`,
    );
    const head = records.at(-1)!.head!; // the source's settings, as the service logs them
    const points = encodePoints([parsePoint({ key: 'replayed', at: AT, values: { n: 1 } })]);
    const good = { head, body: wireToParts(points) };
    const log = new LogAppender(data, lastSeq);
    log.append([good]);
    log.append([{ head, body: [Buffer.from('not the points of a request')] }]);
    log.append([good]);
    log.append([{ head: JSON.stringify({ id: 7 }), body: wireToParts(points) }]);
    log.append([good]);
    log.close();
    const damaged = recoverLog(data, folded).records.filter((_, i) => i === 1 || i === 3);
    assert.equal(damaged.length, 2);

    service = await start();
    const asides = logLines(service).filter((l) => l.msg === 'write log: damaged bytes set aside');
    assert.deepEqual(
      asides.map((l) => [l.offset, l.bytes]),
      damaged.map((r) => [r.offset, r.bytes.length]),
      'each damaged record, and only those, is set aside',
    );
    assert.match(String(asides[0]!.reason), /^does not decode: SyntaxError/);
    assert.match(String(asides[1]!.reason), /^does not decode: Error: head is not a source's settings/);
    for (const [i, line] of asides.entries()) {
      const file = path.join(data, String(line.set_aside));
      assert.equal(
        String(line.set_aside),
        `${path.basename(damaged[i]!.file)}.damaged-at-${damaged[i]!.offset}`,
      );
      assert.deepEqual(readFileSync(file), Buffer.from(damaged[i]!.bytes), 'the record is copied as it was');
      assert.equal(statSync(file).mode & 0o777, 0o600);
    }
    assert.ok(
      logLines(service).some((l) => l.msg === 'metric write log replayed' && l.records === 5),
      service.stderr(),
    );
    const health = await request(service, 'GET', '/api/v1/health');
    assert.deepEqual([health.status, health.body.status], [200, 'ok']);
    assert.equal(await readN('kept'), 3, 'what was stored before is kept');
    assert.equal(await readN('replayed'), 3, 'each good record once');
    const answer = await request(
      service,
      'POST',
      '/api/v1/metrics',
      { key: 'replayed', at: AT, values: { n: 1 } },
      as,
    );
    assert.equal(answer.status, 201);
    await stop(service);

    service = await start();
    assert.equal(await readN('kept'), 3);
    assert.equal(await readN('replayed'), 4, 'nothing replayed twice');
    assert.ok(
      !logLines(service).some((l) => String(l.msg).startsWith('write log:')),
      'the next start warns no more',
    );
    assert.equal(readdirSync(data).filter((n) => n.includes('.damaged-at-')).length, 2);
    await stop(service);
  },
);

// Cluster mode's pure pieces (docs/cluster.md part 3): which metrics cluster a source is on, the
// mapping of PostgreSQL's refusals of client values to 4xx, and the node id. The HTTP side, against
// a real PostgreSQL, is test/http/cluster-mode.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { projectClusterOf } from '../../src/drivers';
import { DEFAULT_CLUSTER_ID, parseClusters } from '../../src/config-clusters';
import {
  clientFault,
  databaseUnavailable,
  NUL_IN_TEXT,
  NUMBER_OUT_OF_RANGE,
} from '../../src/storage/pg/client';
import { AppError, toHttp } from '../../src/errors';
import { newNodeId } from '../../src/ops/node-id';
import type { Source } from '../../src/model/source';

const source = (type: Source['type'], config: Record<string, unknown>): Source => ({
  id: '0b6f6f3e-6d5c-4e55-9c6a-2f6f0f6f6f6f',
  organizationId: 'org',
  type,
  displayName: 'S',
  driver: type === 'database' ? 'postgres' : null,
  timeZone: 'UTC',
  beginningOfWeek: 1,
  granularities: ['1h'],
  defaultTimeframe: '7d',
  defaultGranularity: '1h',
  expireAfter: null,
  projectClusterId: null,
  config,
  setupStatus: null,
  createdAt: 0,
});

describe('the metrics cluster of a source', () => {
  const configured = '5b0c2d8e-7a41-4c55-9e3f-0a1b2c3d4e5f';

  test('one node: a project is on a cluster only when its row names one', () => {
    assert.equal(projectClusterOf(source('project', {})), null);
    assert.equal(projectClusterOf(source('project', { cluster_id: configured })), configured);
  });

  test('cluster mode: a project naming none (created so, or copied by service migrate) is on the default one', () => {
    assert.equal(projectClusterOf(source('project', {}), DEFAULT_CLUSTER_ID), DEFAULT_CLUSTER_ID);
    assert.equal(
      projectClusterOf(source('project', { cluster_id: configured }), DEFAULT_CLUSTER_ID),
      configured,
    );
    // a database source's store is its owner's, in either mode
    assert.equal(projectClusterOf(source('database', {}), DEFAULT_CLUSTER_ID), null);
    assert.equal(projectClusterOf(source('database', { cluster_id: configured }), DEFAULT_CLUSTER_ID), null);
  });

  test('the default cluster id is never a configured one', () => {
    assert.match(String(parseClusters([{ id: DEFAULT_CLUSTER_ID, url: 'postgres://h/db' }])), /reserved/);
  });
});

describe("PostgreSQL's refusals of client values", () => {
  const pgError = (code: string) => Object.assign(new Error(`postgres says ${code}`), { code });

  test('a NUL character answers 400, numbers and integers 422, with no word of PostgreSQL', () => {
    for (const [code, status, detail] of [
      ['22021', 400, NUL_IN_TEXT],
      ['22P05', 400, NUL_IN_TEXT],
      ['22003', 422, NUMBER_OUT_OF_RANGE],
      ['22P02', 422, undefined],
      ['22001', 422, undefined],
    ] as const) {
      const fault = clientFault(pgError(code));
      assert.ok(fault instanceof AppError, code);
      const answer = toHttp(fault);
      assert.equal(answer.status, status, code);
      assert.ok(!JSON.stringify(answer.body).includes('postgres says'), code);
      if (detail !== undefined) assert.deepEqual(Object.values(answer.body.errors).flat(), [detail], code);
    }
  });

  test('anything else is not the client fault: a unique violation stays the repository one, a lost database 503', () => {
    for (const code of ['23505', '42P01', '40001', '08006', undefined]) {
      assert.equal(clientFault(code === undefined ? new Error('x') : pgError(code)), null, String(code));
    }
    assert.equal(toHttp(databaseUnavailable(pgError('08006'))).status, 503);
  });
});

test('a node id is host:pid:random, new at every start', () => {
  const a = newNodeId();
  const b = newNodeId();
  assert.match(
    a,
    new RegExp(`^${os.hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${process.pid}:[0-9a-f]{8}$`),
  );
  assert.notEqual(a, b);
});

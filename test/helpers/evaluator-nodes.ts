// Alert evaluators as the nodes of a cluster would run them: each over its own monitors repository
// (its own connection or pool) on one database, with its own clock. The evaluator and the
// repositories are the real ones; the source and its series are given (the metrics read is not what
// these tests are about): every key holds `load` in every bucket.
import { createEvaluator, type Evaluator } from '../../src/domain/alerts/evaluator';
import type { SeriesReader } from '../../src/domain/alerts/reader';
import type { Logger } from '../../src/lib/log';
import type { Monitor } from '../../src/model/monitor';
import type { Source } from '../../src/model/source';
import type { MonitorsRepo } from '../../src/storage/monitors';
import type { OutboxRepo } from '../../src/storage/outbox';

export const NODE_CHANNELS = ['0b6f3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a51', '0b6f3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a52'];

export function nodeSource(organizationId: string): Source {
  return {
    id: 'src-nodes',
    organizationId,
    type: 'project',
    displayName: 'nodes',
    driver: null,
    timeZone: 'UTC',
    beginningOfWeek: 1,
    granularities: ['1m'],
    defaultTimeframe: '10m',
    defaultGranularity: '1m',
    expireAfter: null,
    projectClusterId: null,
    config: {},
    setupStatus: null,
    createdAt: 0,
  };
}

/** An alert monitor on `cpu`'s load above 90, firing at once, notifying two channels. */
export function nodeMonitor(id: string, organizationId: string, userId: string): Monitor {
  return {
    id,
    organizationId,
    userId,
    name: `cpu ${id}`,
    description: null,
    type: 'alert',
    status: 'active',
    locked: false,
    sourceType: 'project',
    sourceId: 'src-nodes',
    alertMetricKey: 'cpu',
    alertMetricPath: 'load',
    alertSeries: [],
    alertTimeframe: '10m',
    alertGranularity: '1m',
    alertNotifyEvery: 1,
    deliveryChannels: NODE_CHANNELS.map((channel_id) => ({ channel_id })),
    alerts: [
      {
        id: `rule-${id}`,
        analysis_strategy: 'threshold',
        settings: { direction: 'above', value: 90 },
        status: 'passed',
        last_summary: null,
        last_evaluated_at: null,
      },
    ],
    triggerStatus: 'idle',
    for: '0m',
    repeatEvery: null,
    notifyRecovery: true,
    notifyNoData: false,
    mutedUntil: null,
    extra: {},
    insertedAt: 1000,
    updatedAt: 1000,
    updatedBy: userId,
  };
}

export interface Node {
  evaluator: Evaluator;
  /** the warnings it logged (a failed evaluation is one) */
  warnings: string[];
}

/** An evaluator over `monitors`, reading the clock `now` and the series `load()`. */
export function evaluatorNode(
  monitors: MonitorsRepo,
  outbox: OutboxRepo,
  organizationId: string,
  now: () => number,
  load: () => number,
): Node {
  const warnings: string[] = [];
  const source = nodeSource(organizationId);
  const metrics: SeriesReader = {
    readSeries: async (_source, params) => ({
      at: params.range.bucketsMs.map((ms) => new Date(ms).toISOString()),
      values: params.range.bucketsMs.map(() => JSON.stringify({ load: load() })),
    }),
  };
  const log: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (msg, fields) => void warnings.push(`${msg} ${JSON.stringify(fields ?? {})}`),
    error: (msg, fields) => void warnings.push(`${msg} ${JSON.stringify(fields ?? {})}`),
  };
  const evaluator = createEvaluator({
    monitors,
    outbox,
    sources: { byId: async (id) => (id === source.id ? source : undefined) },
    metrics,
    now,
    log,
  });
  return { evaluator, warnings };
}

const MIN = 60_000;

/** Two nodes on one database, and how a test holds their commits back and counts rows. */
export interface TwoNodes {
  repos: [MonitorsRepo, MonitorsRepo];
  outboxes: [OutboxRepo, OutboxRepo];
  organizationId: string;
  userId: string;
  /**
   * Holds what the nodes' commits need (the write lock, the monitors' rows) from another
   * connection, so that both read the same state before either writes; resolves to the release.
   */
  hold(ids: string[]): Promise<() => Promise<void>>;
  /** the rows of `table` of a monitor */
  count(table: 'monitor_history' | 'alert_outbox', monitorId: string): Promise<number>;
}

/**
 * Both nodes run each round at once, clocks 3 ms apart, over the same due monitors, their commits
 * held until both have read the monitors and instances: every transition's history entry and
 * notifications (one per channel) are written once, by one node, and the next rounds go on from the
 * state written. Steps: load 95 (OK to Firing, notified), 95 again (no change), 10 (resolved).
 */
export async function evaluateOnTwoNodes(
  nodes: TwoNodes,
  prefix: string,
  check: {
    equal(actual: unknown, expected: unknown, message?: string): void;
    ok(value: unknown, message?: string): void;
  },
  monitors = 8,
): Promise<void> {
  const { organizationId: org, userId } = nodes;
  const ids = Array.from({ length: monitors }, (_, i) => `${prefix}-${i}`);
  for (const id of ids) check.equal(await nodes.repos[0].insert(nodeMonitor(id, org, userId), 1000), true);
  const base = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;
  let clock = base;
  let load = 0;
  // Each node's repository as it is, but noting when a commit found the lock taken (the node has
  // judged and read what it commits, and waits).
  const waited = [false, false];
  const noting = (repo: MonitorsRepo, node: number): MonitorsRepo => ({
    ...repo,
    saveEvaluations: async (evaluations, options) => {
      const results = await repo.saveEvaluations(evaluations, options);
      if (results === null) waited[node] = true;
      return results;
    },
  });
  const a = evaluatorNode(
    noting(nodes.repos[0], 0),
    nodes.outboxes[0],
    org,
    () => clock,
    () => load,
  );
  const b = evaluatorNode(
    noting(nodes.repos[1], 1),
    nodes.outboxes[1],
    org,
    () => clock + 3,
    () => load,
  );
  const steps = [
    { load: 95, changes: 1, history: 1, outbox: 2 },
    { load: 95, changes: 0, history: 1, outbox: 2 },
    { load: 10, changes: 1, history: 2, outbox: 4 },
  ];
  try {
    for (const [index, step] of steps.entries()) {
      const label = `${prefix} step ${index + 1} (load ${step.load})`;
      clock = base + (index + 1) * MIN + 30_000;
      load = step.load;
      const release = await nodes.hold(ids);
      waited.fill(false);
      const rounds = Promise.all([a.evaluator.round(), b.evaluator.round()]);
      // Released once both wait (the evaluator tries again for 5 s before waiting in the database).
      const until = performance.now() + 4000;
      while (!(waited[0] && waited[1]) && performance.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 5));
      await release();
      const [sa, sb] = await rounds;
      check.equal(sa.errors + sb.errors, 0, `${label}: ${[...a.warnings, ...b.warnings].join('; ')}`);
      check.equal(sa.monitors, monitors, `${label}: node A judged every monitor`);
      check.equal(sb.monitors, monitors, `${label}: node B judged every monitor`);
      check.ok(sa.lockWaits > 0 && sb.lockWaits > 0, `${label}: both nodes waited to commit`);
      // Both nodes' first commits begin with the first monitor, read before either wrote.
      check.ok(sa.stale + sb.stale >= 1, `${label}: an evaluation from the state before the other's dropped`);
      check.equal(sa.changes + sb.changes, step.changes * monitors, `${label}: each change written once`);
      check.equal(
        sa.queued + sb.queued,
        2 * step.changes * monitors,
        `${label}: each notification queued once`,
      );
      for (const id of ids) {
        check.equal(await nodes.count('monitor_history', id), step.history, `${label}: history of ${id}`);
        check.equal(await nodes.count('alert_outbox', id), step.outbox, `${label}: notifications of ${id}`);
        const stored = await nodes.repos[1].byId(id, org);
        const stamp = stored?.alerts[0]?.last_evaluated_at;
        // the clock of the node that wrote last, or 1 ms past the other's when that was later
        check.ok(
          typeof stamp === 'number' && stamp >= clock && stamp <= clock + 4,
          `${label}: ${id} evaluated in this round (${stamp})`,
        );
      }
    }
  } finally {
    await a.evaluator.close();
    await b.evaluator.close();
  }
}

// The evaluation loop (SPEC 13). Every `[alerts] interval` each active alert monitor is read over the
// completed buckets of its window and each instance (one per key; one per matching key of a pattern)
// moves between states:
//
//   OK --condition holds--> Pending (while it has held for less than `for`) --> Firing
//   Firing --condition ends--> OK (a recovery, notified unless notify_recovery is false)
//   any --no value in the window, notify_no_data--> NoData      any --read failed--> Error
//
// Every state change is written to the history; changes that notify (to Firing, NoData, Error, a
// recovery from them) and reminders (while Firing: every `repeat_every`, and every
// `alert_notify_every`-th completed bucket) put one outbox row per channel in
// the same transaction (domain/alerts/outbox.ts sends them). A muted monitor (muted_until in the
// future) is evaluated and keeps its history but queues nothing; a paused one is not evaluated.
// A round works in passes (the active monitors, a page at a time; plans, windows and keys; the series
// of all instances, read many keys of a source and window at a time; judging and committing each
// monitor), in turns of about TURN_MS with a pause after each (pace.ts), so that ingest requests
// keep their latency meanwhile.
// After the alert monitors, a round sends the report monitors' periods that are due (reports.ts).
// The clock is injected (`now`): tests move it and call `round()` themselves.
import { createHash } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Logger } from '../../lib/log';
import { evaluationStamp, type Evaluation, type MonitorsRepo } from '../../storage/monitors';
import type { NewOutboxRow, OutboxRepo } from '../../storage/outbox';
import type { Source } from '../types';
import type { HistoryEntry, InstanceState, Monitor, MonitorInstance } from '../../model/monitor';
import type { NotificationKind, OutgoingNotification } from './delivery-port';
import { formatTimestamp } from '../../shared/time';
import { compileMonitor, type MonitorPlan } from './plan';
import { KeyMatches, RoundReader, type SeriesReader, type Window, windowOf } from './reader';
import { Pacer, TURN_MS } from './pace';
import { describeRule, runRule } from './strategies';
import { channelIdsOf } from './monitors';
import { durationMs } from './limits';
import type { Reporter } from './reports';

export interface EvaluatorPorts {
  monitors: MonitorsRepo;
  outbox: OutboxRepo;
  sources: { byId(id: string): Promise<Source | undefined> };
  metrics: SeriesReader;
  now: () => number;
  log: Logger;
  /** called after a round that queued notifications (the outbox worker looks at once) */
  onQueued?: () => void;
  /** runs the report monitors after the alert monitors of each round (domain/alerts/reports.ts) */
  reports?: Reporter;
}

export interface RoundStats {
  monitors: number;
  instances: number;
  changes: number;
  queued: number;
  errors: number;
  /** report monitors that sent their period in this round */
  reports: number;
  /** CPU time of the whole process during the round (all threads: ingest's work meanwhile too) */
  cpuMs: number;
  wallMs: number;
  /** wall time of the round's turns on the event loop (waits for reads inside a turn included) */
  busyMs: number;
  /** the longest of those turns */
  longestTurnMs: number;
  /** the turns the round took (each but the last followed by a pause) */
  turns: number;
  /** what the round was doing at the end of its longest turn (load, prepare, read, judge, commit) */
  longestStep: string;
  /** commits put off because another connection held the write lock */
  lockWaits: number;
  /**
   * evaluations dropped whole: the monitor changed, went or was evaluated (another node's round)
   * between this round's reads and its commit; judged again at the next round
   */
  stale: number;
  /**
   * the event loop's delay during the round (a 1 ms timer's lateness, whatever held the loop: the
   * round's turns, its reads' synchronous steps, the requests served meanwhile, garbage collection)
   */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

export interface Evaluator {
  /** Evaluates every active monitor once; resolves when the round's writes are committed. */
  round(): Promise<RoundStats>;
  /**
   * Runs rounds every `intervalMs` (0: no timer, round() only) until stop() or close(); after a
   * stop, start() runs them again (the node took the jobs' lease back, src/ops/jobs.ts).
   */
  start(intervalMs: number): void;
  /** Stops the timer and the round in progress (at its next step), resolving once it has ended. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** What one instance's evaluation found. */
interface Finding {
  key: string;
  labels: Record<string, string>;
  error: string | null;
  hasData: boolean;
  condition: boolean;
  value: number | null;
  rules: MonitorInstance['rules'];
  summary: string;
  /** the end (ms) of the window's last completed bucket; null when the series was not read */
  bucketEnd: number | null;
}

/** A monitor ready to be judged: its plan, window and keys, or the finding that it cannot be. */
interface Job {
  monitor: Monitor;
  source?: Source;
  plan?: MonitorPlan;
  w?: Window;
  keys?: Array<{ key: string; labels: Record<string, string> }>;
  error?: Finding;
}

/** how long a commit tries again, LOCK_PAUSE_MS apart, while another connection holds the write lock */
const LOCK_WAIT_MS = 5000;
const LOCK_PAUSE_MS = 2;

/** active monitors loaded per turn (each is a JSON document to parse) */
const MONITOR_PAGE = 50;

const SEVERITY: Record<InstanceState, number> = { ok: 0, pending: 1, nodata: 2, error: 3, firing: 4 };

/** The worst state over a monitor's instances (ok when it has none). */
export function worstState(instances: readonly MonitorInstance[]): InstanceState {
  let worst: InstanceState = 'ok';
  for (const i of instances) if (SEVERITY[i.state] > SEVERITY[worst]) worst = i.state;
  return worst;
}

export function createEvaluator(ports: EvaluatorPorts): Evaluator {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<RoundStats> | null = null;
  let closed = false;
  /** stop() or close() was called since the last start(): a round in progress ends at its next step */
  let halted = false;
  /** start() calls, so that a timer of an earlier start never goes on after a restart */
  let starts = 0;
  /** compiled plans by monitor id, kept while the monitor and its source are unchanged */
  const plans = new Map<string, { version: string; plan: MonitorPlan | null; problems: string }>();
  /** the window's keys and the patterns' matches of the last round (reader.ts) */
  const matches = new KeyMatches();

  function planOf(monitor: Monitor, source: Source): { plan: MonitorPlan | null; problems: string } {
    // What compileMonitor reads (not updatedAt: a clock a test holds can save two versions at one instant).
    const version = JSON.stringify([
      monitor.type,
      monitor.alertMetricKey,
      monitor.alertMetricPath,
      monitor.alertSeries,
      monitor.alertGranularity,
      monitor.alertTimeframe,
      monitor.alerts.map((r) => [r.id, r.analysis_strategy, r.settings]),
      source.timeZone,
      source.beginningOfWeek,
      source.granularities,
      source.defaultGranularity,
      source.defaultTimeframe,
    ]);
    const known = plans.get(monitor.id);
    if (known && known.version === version) return known;
    const problems: string[] = [];
    const plan = compileMonitor(monitor, source, { add: (f, m) => problems.push(`${f} ${m}`) });
    const compiled = { version, plan, problems: problems.join('; ') };
    plans.set(monitor.id, compiled);
    return compiled;
  }

  async function round(): Promise<RoundStats> {
    if (running) return running; // a slow round is never overlapped by the next
    running = (async () => {
      const started = performance.now();
      const cpu = process.cpuUsage();
      const stats: RoundStats = {
        monitors: 0,
        instances: 0,
        changes: 0,
        queued: 0,
        errors: 0,
        reports: 0,
        cpuMs: 0,
        wallMs: 0,
        busyMs: 0,
        longestTurnMs: 0,
        turns: 0,
        longestStep: '',
        lockWaits: 0,
        stale: 0,
        loopDelayP99Ms: 0,
        loopDelayMaxMs: 0,
      };
      // The round's work is spread over short turns of the event loop with a pause after each
      // (pace.ts): ingest keeps its latency while a round runs.
      const pacer = new Pacer();
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      try {
        await evaluateActive(stats, pacer);
      } finally {
        delay.disable();
      }
      pacer.finish();
      stats.busyMs = pacer.busyMs;
      stats.longestTurnMs = pacer.longestMs;
      stats.turns = pacer.pauses + 1;
      stats.longestStep = pacer.longestStep;
      stats.loopDelayP99Ms = delay.percentile(99) / 1e6;
      stats.loopDelayMaxMs = delay.max / 1e6;
      const used = process.cpuUsage(cpu);
      stats.cpuMs = (used.user + used.system) / 1000;
      stats.wallMs = performance.now() - started;
      if (stats.queued > 0) ports.onQueued?.();
      return stats;
    })();
    try {
      return await running;
    } finally {
      running = null;
    }
  }

  /** Every active monitor, a page at a time with the round's pace between pages. */
  async function activeMonitors(pacer: Pacer): Promise<Monitor[]> {
    const active: Monitor[] = [];
    for (;;) {
      const page = await ports.monitors.activePage(active[active.length - 1] ?? null, MONITOR_PAGE);
      active.push(...page);
      if (page.length < MONITOR_PAGE || halted) return active;
      await pacer.turn();
    }
  }

  async function evaluateActive(stats: RoundStats, pacer: Pacer): Promise<void> {
    const reader = new RoundReader(ports.metrics, matches, pacer);
    const now = ports.now();
    pacer.step = 'load';
    const active = await activeMonitors(pacer);
    const ids = new Set(active.map((m) => m.id));
    for (const id of plans.keys()) if (!ids.has(id)) plans.delete(id);
    const queue = active.filter((m) => m.type === 'alert');
    stats.monitors = queue.length;
    // 1. Each monitor's plan, window and keys (the keys written in a window are read once per
    //    source and window).
    const jobs: Job[] = [];
    pacer.step = 'prepare';
    for (const monitor of queue) {
      if (halted) break;
      await pacer.turn();
      try {
        jobs.push(await prepare(monitor, reader, now));
      } catch (err) {
        failed(stats, monitor, err);
      }
    }
    pacer.step = 'read';
    await prefetchAll(jobs, reader, pacer);
    pacer.step = 'judge';
    // 3. Judged monitor by monitor and committed a turn's monitors at a time.
    let judged: Array<{ job: Job; findings: Finding[] }> = [];
    for (const job of jobs) {
      if (halted) break;
      if (pacer.spentMs() >= TURN_MS / 2) {
        await commitAll(judged, now, stats, pacer);
        judged = [];
        await pacer.turn();
      }
      try {
        judged.push({ job, findings: await judge(job, reader, stats) });
      } catch (err) {
        failed(stats, job.monitor, err);
      }
    }
    await commitAll(judged, now, stats, pacer);
    matches.endRound();
    // 4. Report monitors whose period has not been sent.
    const reports = active.filter((m) => m.type === 'report');
    if (ports.reports && reports.length > 0 && !halted) {
      pacer.step = 'reports';
      const done = await ports.reports.run(reports, now, () => pacer.turn());
      stats.reports = done.reports;
      stats.queued += done.queued;
      stats.errors += done.errors;
    }
  }

  function failed(stats: RoundStats, monitor: Monitor, err: unknown) {
    stats.errors += 1;
    ports.log.warn('monitor evaluation failed', { monitor_id: monitor.id, error: (err as Error).message });
  }

  /**
   * 2. The instances' series, grouped by source and window: multi-key reads, one round trip to the
   * metric writer per READ_SLICE_KEYS keys instead of one per key.
   */
  async function prefetchAll(jobs: Job[], reader: RoundReader, pacer: Pacer): Promise<void> {
    const groups = new Map<string, { source: Source; w: Window; keys: string[] }>();
    for (const job of jobs) {
      if (!job.source || !job.w || !job.keys) continue;
      const name = `${job.source.id}\u0000${job.w.granularity.text}\u0000${job.w.bucketsMs[0]}\u0000${job.w.endMs}`;
      let group = groups.get(name);
      if (!group) groups.set(name, (group = { source: job.source, w: job.w, keys: [] }));
      for (const { key } of job.keys) group.keys.push(key);
    }
    for (const { source, w, keys } of groups.values()) {
      if (halted) break;
      await pacer.turn();
      await reader.prefetch(source, keys, w);
    }
  }

  /** A monitor's plan, window and keys, or why it cannot be evaluated. */
  async function prepare(monitor: Monitor, reader: RoundReader, now: number): Promise<Job> {
    const source = await ports.sources.byId(monitor.sourceId);
    if (!source) return { monitor, error: errorFinding(monitor.alertMetricKey ?? '', 'source not found') };
    const { plan, problems } = planOf(monitor, source);
    if (!plan) return { monitor, error: errorFinding(monitor.alertMetricKey ?? '', problems) };
    const w = windowOf(source, plan.granularity, now - plan.timeframeMs, now);
    try {
      return { monitor, source, plan, w, keys: await reader.keys(source, plan, w) };
    } catch (err) {
      return { monitor, error: errorFinding(plan.key, readError(err)) };
    }
  }

  async function judge(job: Job, reader: RoundReader, stats: RoundStats): Promise<Finding[]> {
    const findings =
      job.error !== undefined
        ? [job.error]
        : await readFindings(job.source!, job.plan!, job.w!, job.keys!, reader);
    stats.instances += findings.length;
    return findings;
  }

  /**
   * Commits the findings of several monitors in one transaction: one write to the WAL and one hold
   * of the write lock (which the metric writer's folds share) instead of one per monitor. Each
   * monitor's writes are atomic on their own (saveEvaluations: a savepoint each, written only at the
   * version and evaluation stamp evaluated from, else dropped as stale; one that fails is rolled
   * back alone and counted as an error). While another connection holds the write lock the round
   * pauses and tries again (for up to LOCK_WAIT_MS) instead of sleeping on the event loop in
   * SQLite's busy handler; after that it waits for the lock as any other write of the service does.
   */
  async function commitAll(
    judged: ReadonlyArray<{ job: Job; findings: Finding[] }>,
    now: number,
    stats: RoundStats,
    pacer: Pacer,
  ) {
    if (judged.length === 0) return;
    const step = pacer.step;
    pacer.step = 'commit';
    const planned: Array<{ monitor: Monitor; evaluation: Evaluation; changes: number }> = [];
    try {
      for (const { job, findings } of judged) {
        try {
          const p = await planCommit(job.monitor, findings, now);
          if (p) planned.push({ monitor: job.monitor, ...p });
          else stats.stale += 1;
        } catch (err) {
          failed(stats, job.monitor, err);
        }
      }
      if (planned.length === 0) return;
      const evaluations = planned.map((p) => p.evaluation);
      let results: Array<number | null | Error> | null = null;
      const until = performance.now() + LOCK_WAIT_MS;
      while (results === null && performance.now() < until && !halted) {
        results = await ports.monitors.saveEvaluations(evaluations, { tryOnly: true });
        if (results !== null) break;
        stats.lockWaits += 1;
        await pacer.rest(LOCK_PAUSE_MS);
      }
      results ??= (await ports.monitors.saveEvaluations(evaluations, { tryOnly: false }))!;
      for (const [index, result] of results.entries()) {
        const p = planned[index]!;
        if (result instanceof Error) failed(stats, p.monitor, result);
        else if (result === null) stats.stale += 1;
        else {
          stats.changes += p.changes;
          stats.queued += result;
        }
      }
    } catch (err) {
      for (const p of planned) failed(stats, p.monitor, err);
    } finally {
      pacer.step = step;
    }
  }

  async function readFindings(
    source: Source,
    plan: MonitorPlan,
    w: Window,
    keys: Array<{ key: string; labels: Record<string, string> }>,
    reader: RoundReader,
  ): Promise<Finding[]> {
    const findings: Finding[] = [];
    // The instances' reads at once (a pattern's keys), then judged in key order.
    const reads = await Promise.all(
      keys.map(({ key }) =>
        reader.series(source, plan, key, w).then(
          (values) => ({ values, error: null }),
          (err: unknown) => ({ values: null, error: readError(err) }),
        ),
      ),
    );
    for (const [index, { key, labels }] of keys.entries()) {
      const read = reads[index]!;
      if (read.values === null) {
        findings.push({ ...errorFinding(key, read.error!), labels });
        continue;
      }
      const values = read.values;
      const series = { at: w.bucketsMs, end: w.endMs, values };
      const rules: MonitorInstance['rules'] = {};
      let condition = false;
      let value: number | null = null;
      const held: string[] = [];
      for (const { rule, settings } of plan.rules) {
        const outcome = runRule(series, settings);
        const text = describeRule(settings);
        if (value === null) value = outcome.value;
        if (outcome.firing) {
          condition = true;
          held.push(text);
        }
        const summary = outcome.firing
          ? `${text}: ${formatValue(outcome.value)} at ${formatTimestamp(outcome.at!)}`
          : outcome.at === null
            ? `no data in the last ${plan.timeframe}`
            : `passed (${formatValue(outcome.value)}, ${text} not met)`;
        rules[rule.id] = { firing: outcome.firing, summary };
      }
      const hasData = values.some((x) => x !== null);
      findings.push({
        key,
        labels,
        bucketEnd: w.endMs,
        error: null,
        hasData,
        condition,
        value,
        rules,
        summary: condition
          ? held.join('; ')
          : hasData
            ? 'condition not met'
            : `no data in the last ${plan.timeframe}`,
      });
    }
    return findings;
  }

  /**
   * What a monitor's findings change: history, instance states, forgotten instances and the
   * notifications to queue, from the monitor and instances as stored now. Null when the monitor
   * changed or went while its series were read (that round's findings are dropped; saveEvaluations
   * checks the version again as it writes). The evaluation carries the monitor's evaluation stamp
   * read here, before its instances: saveEvaluations writes it only while the stamp is still that
   * one, so an evaluation from instances another round (another node's) has moved on since is
   * dropped whole, and the monitor is judged again from the new state at the next round.
   */
  async function planCommit(
    monitor: Monitor,
    findings: Finding[],
    now: number,
  ): Promise<{ evaluation: Evaluation; changes: number } | null> {
    const fresh = await ports.monitors.byId(monitor.id, monitor.organizationId);
    if (!fresh || fresh.updatedAt !== monitor.updatedAt || fresh.status !== 'active') return null;
    const from = evaluationStamp(fresh.alerts);
    // The stamp written is later than the one read (the clock, or 1 ms past the stamp when the
    // clock is not past it: a node whose clock is behind, a clock a test holds), so a stamp is never
    // written twice and a compare-and-set cannot mistake a later evaluation for none.
    const stamp = from === null || now > from ? now : from + 1;
    const known = new Map((await ports.monitors.instances(monitor.id)).map((i) => [i.instance, i]));
    const seen = new Set<string>();
    const muted = fresh.mutedUntil !== null && fresh.mutedUntil > now;
    const forMs = durationMs(fresh.for) ?? 0;
    const repeatMs = fresh.repeatEvery ? durationMs(fresh.repeatEvery) : null;
    const writes: Evaluation['writes'] = { history: [], instances: [], removed: [], outbox: [] };
    let changes = 0;
    for (const f of findings) {
      seen.add(f.key);
      const before = known.get(f.key) ?? newInstance(fresh.id, f, now);
      const after = step(before, f, fresh, now, forMs);
      if (after.state !== before.state) {
        changes += 1;
        writes.history.push({
          at: now,
          instance: f.key,
          from: before.state,
          to: after.state,
          value: f.value,
          summary: f.error ?? f.summary,
        });
      }
      const kind = notificationKind(before, after, fresh, now, repeatMs);
      if (kind) {
        // Muted: nothing is queued, but it counts as notified (unmuting sends no burst of old news).
        if (!muted) writes.outbox.push(...enqueue(fresh, before, after, f, kind, now));
        after.lastNotifiedAt = now;
      }
      writes.instances.push(after);
    }
    // Keys that no longer match a pattern are forgotten (their history stays).
    for (const key of known.keys()) if (!seen.has(key)) writes.removed.push(key);
    return {
      evaluation: { evaluated: withRuleStatus(fresh, findings, stamp, muted), from, writes },
      changes,
    };
  }

  /** The notifications of an instance's change, one per channel (queued by saveEvaluations). */
  function enqueue(
    m: Monitor,
    before: MonitorInstance,
    after: MonitorInstance,
    f: Finding,
    kind: NotificationKind,
    now: number,
  ): NewOutboxRow[] {
    const rows: NewOutboxRow[] = [];
    for (const channelId of channelIdsOf(m)) {
      const idempotencyKey = createHash('sha256')
        .update(`${m.id}\u0000${after.instance}\u0000${kind}\u0000${now}\u0000${channelId}`)
        .digest('hex')
        .slice(0, 40);
      const notification = buildNotification(m, before, after, f, kind, now, idempotencyKey);
      rows.push({
        idempotency_key: idempotencyKey,
        organization_id: m.organizationId,
        monitor_id: m.id,
        channel_id: channelId,
        notification: JSON.stringify(notification),
        created_at: now,
      });
    }
    return rows;
  }

  function start(intervalMs: number) {
    if (closed) return;
    halted = false;
    const mine = ++starts;
    if (intervalMs <= 0) return;
    const tick = () => {
      timer = setTimeout(async () => {
        try {
          const stats = await round();
          // One line a round (as the minute's request summary): what it evaluated and what it cost.
          if (stats.monitors > 0 || stats.reports > 0)
            ports.log.info('alerts round', {
              monitors: stats.monitors,
              instances: stats.instances,
              changes: stats.changes,
              queued: stats.queued,
              errors: stats.errors,
              reports: stats.reports,
              cpu_ms: Math.round(stats.cpuMs),
              wall_ms: Math.round(stats.wallMs),
              busy_ms: Math.round(stats.busyMs),
              turns: stats.turns,
              lock_waits: stats.lockWaits,
              stale: stats.stale,
              longest_turn_ms: Math.round(stats.longestTurnMs * 10) / 10,
              longest_step: stats.longestStep,
              loop_delay_p99_ms: Math.round(stats.loopDelayP99Ms * 10) / 10,
              loop_delay_max_ms: Math.round(stats.loopDelayMaxMs * 10) / 10,
            });
        } catch (err) {
          ports.log.warn('alerts round failed', { error: (err as Error).message });
        }
        if (!halted && starts === mine) tick();
      }, intervalMs);
      timer.unref();
    };
    tick();
  }

  async function stop() {
    halted = true;
    if (timer) clearTimeout(timer);
    await running?.catch(() => undefined);
  }

  async function close() {
    closed = true;
    await stop();
  }

  return { round, start, stop, close };
}

function readError(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  return `source unreachable: ${message.slice(0, 200)}`;
}

function errorFinding(key: string, error: string): Finding {
  return {
    key,
    labels: {},
    error,
    hasData: false,
    condition: false,
    value: null,
    rules: {},
    summary: error,
    bucketEnd: null,
  };
}

function newInstance(monitorId: string, f: Finding, now: number): MonitorInstance {
  return {
    monitorId,
    instance: f.key,
    labels: f.labels,
    state: 'ok',
    since: now,
    pendingSince: null,
    lastValue: null,
    lastEvaluatedAt: null,
    lastNotifiedAt: null,
    rules: {},
    firingBuckets: 0,
    countedBucket: null,
  };
}

/** The next state of an instance. */
export function step(
  before: MonitorInstance,
  f: Finding,
  m: Monitor,
  now: number,
  forMs: number,
): MonitorInstance {
  let state: InstanceState;
  let pendingSince: number | null = null;
  if (f.error !== null) state = 'error';
  else if (f.condition) {
    pendingSince = before.pendingSince ?? now;
    if (before.state === 'firing' || now - pendingSince >= forMs) state = 'firing';
    else state = 'pending';
  } else if (!f.hasData && m.notifyNoData) state = 'nodata';
  else state = 'ok';
  // Trifle App counts the evaluations that trigger in a row, one per bucket of the granularity; here a
  // round may see the same last bucket again (rounds are more frequent than buckets): a bucket counts once.
  let firingBuckets = 0;
  let countedBucket: number | null = null;
  if (state === 'firing') {
    const fresh = before.state !== 'firing';
    countedBucket = f.bucketEnd ?? before.countedBucket;
    firingBuckets = fresh
      ? 1
      : before.firingBuckets + (f.bucketEnd !== null && f.bucketEnd !== before.countedBucket ? 1 : 0);
  }
  return {
    ...before,
    firingBuckets,
    countedBucket,
    labels: f.labels,
    state,
    since: state === before.state ? before.since : now,
    pendingSince,
    lastValue: f.value,
    lastEvaluatedAt: now,
    rules: f.rules,
  };
}

const ALARMS = new Set<InstanceState>(['firing', 'nodata', 'error']);

/** What a step notifies: a change into an alarm, a recovery from one, or a reminder. */
function notificationKind(
  before: MonitorInstance,
  after: MonitorInstance,
  m: Monitor,
  now: number,
  repeatMs: number | null,
): NotificationKind | null {
  if (after.state !== before.state) {
    if (after.state === 'firing') return 'firing';
    if (after.state === 'nodata') return 'nodata';
    if (after.state === 'error') return 'error';
    if (ALARMS.has(before.state) && (after.state === 'ok' || after.state === 'pending'))
      return m.notifyRecovery ? 'resolved' : null;
    return null;
  }
  if (after.state !== 'firing') return null;
  // alert_notify_every N (Trifle App's "notify on every Nth consecutive trigger"): a reminder on the
  // (N+1)th, (2N+1)th, ... completed bucket Firing; 1 (its default) adds none here (see docs/alerts.md).
  const every = m.alertNotifyEvery;
  if (every > 1 && after.firingBuckets !== before.firingBuckets && (after.firingBuckets - 1) % every === 0)
    return 'reminder';
  if (repeatMs && repeatMs > 0) {
    const last = before.lastNotifiedAt ?? before.since;
    if (now - last >= repeatMs) return 'reminder';
  }
  return null;
}

function formatValue(value: number | null): string {
  if (value === null) return 'no value';
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
}

function durationText(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  if (h === 0) return `${m} m`;
  return m === 0 ? `${h} h` : `${h} h ${m} m`;
}

function buildNotification(
  m: Monitor,
  before: MonitorInstance,
  after: MonitorInstance,
  f: Finding,
  kind: NotificationKind,
  now: number,
  idempotencyKey: string,
): OutgoingNotification {
  const where =
    Object.keys(f.labels).length > 0
      ? ` (${Object.entries(f.labels)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')})`
      : '';
  const durationMs = now - after.since;
  const titles: Record<NotificationKind, string> = {
    firing: `Firing: ${m.name}${where}`,
    resolved: `Resolved: ${m.name}${where}`,
    reminder: `Still firing for ${durationText(durationMs)}: ${m.name}${where}`,
    nodata: `No data: ${m.name}${where}`,
    error: `Error: ${m.name}${where}`,
    test: `Test: ${m.name}`,
    report: `Report: ${m.name}`,
  };
  const message =
    kind === 'resolved'
      ? `${m.alertMetricKey === f.key ? f.key : f.key} is back to normal (${formatValue(f.value)}).`
      : kind === 'error' || kind === 'nodata'
        ? (f.error ?? f.summary)
        : `${f.key} ${m.alertMetricPath ?? ''}: ${f.summary}`.trim();
  return {
    idempotencyKey,
    kind,
    monitor: { id: m.id, name: m.name },
    instance: f.labels,
    state: after.state,
    previousState: before.state,
    value: f.value,
    condition: f.summary,
    since: formatTimestamp(after.since),
    durationMs,
    title: titles[kind],
    message,
  };
}

/** Trifle App's per-rule fields after a round: status, last_summary, last_evaluated_at (`stamp`). */
function withRuleStatus(m: Monitor, findings: Finding[], stamp: number, muted: boolean): Monitor {
  const alerts = m.alerts.map((rule) => {
    const results = findings.map((f) => f.rules[rule.id]).filter((r) => r !== undefined);
    const failed = findings.some((f) => f.error !== null);
    const firing = results.filter((r) => r.firing);
    const status =
      failed && results.length === 0
        ? 'failed'
        : firing.length > 0
          ? muted
            ? 'suppressed'
            : 'alerted'
          : 'passed';
    const summary =
      failed && results.length === 0
        ? findings.find((f) => f.error)!.error!
        : ((firing[0] ?? results[0])?.summary ?? null);
    return { ...rule, status: status as typeof rule.status, last_summary: summary, last_evaluated_at: stamp };
  });
  return { ...m, alerts };
}

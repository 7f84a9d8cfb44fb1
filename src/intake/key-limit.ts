// The intake's cardinality limit (SPEC 12, docs/intake.md "Cardinality limit"): a source accepts at
// most `intake.max_keys_per_source` distinct keys through the intake. A write whose new keys would
// pass the limit is refused whole on the HTTP endpoints (400 naming the limit, nothing stored); on
// the listeners the points of the keys over the limit are dropped and counted, the rest written.
// Keys the source already holds are always written.
//
// Each source's keys are held as 53-bit hashes in a table of their own (lib/hash-set53.ts: open
// addressing over a Float64Array, cheaper per look-up than a Set of numbers that large), so a
// check costs one lookup per distinct key of the request, whatever the source (or any other
// source) holds: one tenant's cardinality never makes another's writes dearer (SPEC 9). The set is filled once per start, on the source's
// first intake write: a project source's keys are read from the embedded store in pages of
// SEED_PAGE keys with the event loop free between pages (other sources' writes go on meanwhile); a
// database source starts empty and counts the keys the intake writes from then on.
//
// A project on a metrics cluster (docs/cluster.md "The intake's key limit on a cluster project")
// is seeded from its schema instead, asynchronously: its first intake write after a start waits
// for the read (a failed read refuses that write as the cluster does, 503, and the next write
// reads again). Other nodes write the same project, so its set is refreshed while this node writes
// to it: a write finding the set older than refreshMs / 2 starts a refresh in the background, one
// finding it older than refreshMs (the project was idle here, or the refresh outlasts it) waits
// for the refresh. A refresh reads only the rows of the buckets that may hold timestamps from the
// last read on (less refreshMs); keys are only ever added. The embedded path is unchanged.
import type { Deps } from '../deps';
import type { Source } from '../model/source';
import { createMetricKeysRepo } from '../storage/metric-keys';
import type { IntakePoint } from './mapping';
import { hash53 } from '../lib/key-hash';
import { HashSet53 } from '../lib/hash-set53';

/** Keys read from the store per slice while a source's set is filled. */
export const SEED_PAGE = 2000;

export class KeyLimitError extends Error {}

/** Reads a source's stored keys in key order, `limit` after `after` (none: the source has none to read). */
export type SeedKeys = (source: Source, after: string, limit: number) => string[];

/**
 * A project on a metrics cluster: reads its keys (all; with `recentMs`, those of the buckets that
 * may hold the last `recentMs` of timestamps). Null: the source is not on a cluster.
 */
export type ClusterKeys = (source: Source) => ((recentMs?: number) => Promise<string[]>) | null;

/** How old a cluster project's key set may be when it admits a new key (KeyLimit.refreshMs). */
export const CLUSTER_KEYS_REFRESH_MS = 15_000;

const SETTLED = Promise.resolve();

interface SourceKeys {
  hashes: HashSet53;
  /** settles once the stored keys are in `hashes` (a cluster project's: its seed, or a refresh it waits for) */
  seeded: Promise<void>;
  /** set lookups made for this source (checks and seeding): what its writes cost here */
  operations: number;
  /** a project on a metrics cluster: its keys are read there */
  cluster: boolean;
  /** clock() when the last read that completed began (cluster projects) */
  readAt: number;
  /** the refresh under way (cluster projects) */
  refreshing: Promise<void> | null;
}

export interface Admitted {
  points: IntakePoint[];
  /** points left out because their key was new and over the limit (listeners only) */
  dropped: number;
}

export class KeyLimit {
  private readonly sources = new Map<string, SourceKeys>();

  /**
   * A cluster project's set admits a new key only if read there less than this long ago (a write
   * finding it older waits for a refresh); past half of it a write starts one in the background.
   */
  refreshMs = CLUSTER_KEYS_REFRESH_MS;
  /** the clock of the refreshes, in ms (tests drive their own) */
  clock: () => number = () => performance.now();

  constructor(
    readonly max: number,
    private readonly seedKeys: SeedKeys,
    private readonly clusterKeys: ClusterKeys = () => null,
  ) {}

  /** Set lookups made for a source so far (tests measure a write's cost with it). */
  operationsOf(sourceId: string): number {
    return this.sources.get(sourceId)?.operations ?? 0;
  }

  /** Distinct keys counted for a source (null before its first intake write). */
  keysOf(sourceId: string): number | null {
    return this.sources.get(sourceId)?.hashes.size ?? null;
  }

  private keysFor(source: Source): SourceKeys {
    let found = this.sources.get(source.id);
    if (!found) {
      const read = this.clusterKeys(source);
      const entry: SourceKeys = {
        hashes: new HashSet53(),
        seeded: SETTLED,
        operations: 0,
        cluster: read !== null,
        readAt: 0,
        refreshing: null,
      };
      entry.seeded = read ? this.seedFromCluster(source, entry, read) : this.seed(source, entry);
      this.sources.set(source.id, entry);
      found = entry;
    } else if (found.cluster) this.refreshIfOld(source, found);
    return found;
  }

  /** Adds the keys read to the set; counts them as operations. */
  private static add(entry: SourceKeys, keys: readonly string[]): void {
    for (const key of keys) entry.hashes.add(hash53(key));
    entry.operations += keys.length;
  }

  /** A cluster project's first read; a failure forgets the entry, so the next write reads again. */
  private async seedFromCluster(
    source: Source,
    entry: SourceKeys,
    read: (recentMs?: number) => Promise<string[]>,
  ): Promise<void> {
    const began = this.clock();
    try {
      KeyLimit.add(entry, await read());
    } catch (err) {
      if (this.sources.get(source.id) === entry) this.sources.delete(source.id);
      throw err;
    }
    entry.readAt = began;
    entry.seeded = SETTLED; // read: later writes find the set ready and may refresh it
  }

  /** Starts a refresh of a cluster project's set when it is old; makes writes wait when too old. */
  private refreshIfOld(source: Source, entry: SourceKeys): void {
    const began = this.clock();
    const age = began - entry.readAt;
    if (entry.refreshing !== null) {
      // a refresh behind the writes that outlasts the interval: they wait for it from now on
      if (age >= this.refreshMs && entry.seeded === SETTLED) entry.seeded = entry.refreshing;
      return;
    }
    if (entry.seeded !== SETTLED || age < this.refreshMs / 2) return; // seeding, or fresh
    const read = this.clusterKeys(source); // the project's settings of now (its granularities)
    if (read === null) return;
    // the rows that may hold keys written since the last read began (and a refresh's worth more)
    const refresh = read(age + this.refreshMs).then((keys) => KeyLimit.add(entry, keys));
    entry.refreshing = refresh;
    if (age >= this.refreshMs) entry.seeded = refresh; // too old to admit new keys: writes wait
    const done = (ok: boolean) => {
      entry.refreshing = null;
      if (entry.seeded === refresh) entry.seeded = SETTLED;
      if (ok) entry.readAt = began;
    };
    // a failed refresh keeps the set; the writes waiting on it are refused, the next write retries
    refresh.then(
      () => done(true),
      () => done(false),
    );
  }

  private async seed(source: Source, entry: SourceKeys): Promise<void> {
    let after = '';
    for (;;) {
      const keys = this.seedKeys(source, after, SEED_PAGE);
      for (const key of keys) entry.hashes.add(hash53(key));
      entry.operations += keys.length;
      if (keys.length < SEED_PAGE) return;
      after = keys[keys.length - 1]!;
      await new Promise<void>((resolve) => setImmediate(resolve)); // other requests between pages
    }
  }

  /**
   * All or nothing (HTTP): admits the request's new keys, or throws KeyLimitError when they would
   * take the source past the limit (then none of them is counted).
   */
  async admitAll(source: Source, points: readonly IntakePoint[]): Promise<void> {
    return this.admitKeys(
      source,
      points.map((point) => point.key),
    );
  }

  /**
   * admitAll for the keys of a request (repeated keys are fine); `hashes`, when given, holds each
   * key's hash53 (the line-protocol reader keeps them with the keys it knows).
   */
  async admitKeys(source: Source, keys: readonly string[], hashes?: readonly number[]): Promise<void> {
    const entry = this.keysFor(source);
    await entry.seeded;
    const held = entry.hashes;
    let fresh: Map<number, string> | null = null; // the new keys (none, usually)
    let looked = 0;
    let last = '';
    let lastHash = -1;
    for (let i = 0; i < keys.length; i++) {
      let h: number;
      if (hashes !== undefined) {
        // the same hash is the same key (as the set holds them): no comparison of the texts
        h = hashes[i]!;
        if (h === lastHash) continue; // a line's points share their key
        lastHash = h;
      } else {
        const key = keys[i]!;
        if (key === last) continue;
        last = key;
        h = hash53(key);
      }
      // a key the source holds (the usual case) costs one look-up, a new one two
      if (held.has(h)) {
        looked++;
        continue;
      }
      if (fresh === null) fresh = new Map();
      else if (fresh.has(h)) continue;
      looked++;
      fresh.set(h, keys[i]!);
    }
    entry.operations += looked;
    if (fresh === null) return;
    if (entry.hashes.size + fresh.size > this.max) {
      const first = fresh.values().next().value!;
      const shown = first.length > 80 ? `${first.slice(0, 80)}...` : first;
      throw new KeyLimitError(
        `the source holds ${entry.hashes.size} keys and this write would add ${fresh.size} new ones ` +
          `(the first: ${JSON.stringify(shown)}), over the limit of ${this.max} keys per source ` +
          `(intake.max_keys_per_source); writes to its existing keys are still accepted`,
      );
    }
    for (const h of fresh.keys()) held.add(h);
  }

  /** Some (listeners): new keys are admitted while there is room; the points of the others are dropped. */
  async admitSome(source: Source, points: IntakePoint[]): Promise<Admitted> {
    const entry = this.keysFor(source);
    await entry.seeded;
    const refused = new Set<number>();
    let dropped = 0;
    const kept = points.filter((point) => {
      const h = hash53(point.key);
      if (refused.has(h)) {
        dropped++;
        return false;
      }
      entry.operations++;
      if (entry.hashes.has(h)) return true;
      if (entry.hashes.size < this.max) {
        entry.hashes.add(h);
        return true;
      }
      refused.add(h);
      dropped++;
      return false;
    });
    return { points: dropped === 0 ? points : kept, dropped };
  }
}

const limits = new WeakMap<object, KeyLimit>();

/** The key limit of one server (keyed by its Deps' ops, like the intake's counters). */
export function keyLimitOf(deps: Pick<Deps, 'ops' | 'db' | 'config' | 'metrics'>): KeyLimit {
  let found = limits.get(deps.ops);
  if (!found) {
    const stored = createMetricKeysRepo(deps.db);
    found = new KeyLimit(
      deps.config.intake.maxKeysPerSource,
      (source, after, limit) => (source.type === 'project' ? stored.page(source.id, after, limit) : []),
      (source) => {
        const cluster = source.type === 'project' ? deps.metrics.cluster(source) : null;
        return cluster && ((recentMs?: number) => cluster.keys(recentMs));
      },
    );
    limits.set(deps.ops, found);
  }
  return found;
}

// `[[clusters]]` (config.example.toml, docs/cluster.md): the metrics clusters a project may name by
// `project_cluster_id` at creation (SPEC 14). Each is a PostgreSQL database given by its URL; a
// project created on it keeps its buckets there. Checked here, with messages naming the entry.

export interface ClusterConfig {
  /** lower-case UUID, the `project_cluster_id` clients send */
  readonly id: string;
  /** postgres:// or postgresql:// URL of the cluster's database */
  readonly url: string;
  /**
   * `merge_window_ms`: how long each node gathers a cluster project's writes before one commit
   * (the write queue, domain/metrics/write-queue.ts); 0 commits at the next free turn of the
   * event loop, as for every other store.
   */
  readonly mergeWindowMs: number;
}

/**
 * The merge window of a cluster that sets none. Chosen by bench/cluster.ts (docs/cluster.md, "The
 * merge window"): see there for the figures.
 */
export const DEFAULT_MERGE_WINDOW_MS = 20;
/** Every write waits up to the window for its answer: a second is already more than any client wants. */
export const MAX_MERGE_WINDOW_MS = 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEYS = new Set(['id', 'url', 'merge_window_ms']);

/**
 * The id of the default metrics cluster in cluster mode: `storage.url` itself, where every project
 * that names no configured cluster keeps its buckets (docs/cluster.md). Never a `[[clusters]]` id
 * (the nil UUID), never sent by or to clients.
 */
export const DEFAULT_CLUSTER_ID = '00000000-0000-0000-0000-000000000000';

/** What is wrong with a PostgreSQL URL (`[[clusters]]`, `storage.url`), or null. The password is never echoed. */
export function postgresUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url must be a postgres://user@host:port/database URL';
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    return 'url must start with postgres:// or postgresql://';
  if (url.hostname === '') return 'url must name a host';
  if (url.pathname.replace(/^\//, '') === '') return 'url must name a database';
  return null;
}

/**
 * `[[clusters]]` tables (or the same as a JSON array in SERVICE_CLUSTERS), checked: every id a
 * UUID, no id twice, every url a PostgreSQL URL naming a host and a database, merge_window_ms (if
 * given) an integer number of milliseconds from 0 to MAX_MERGE_WINDOW_MS. Returns the
 * clusters (ids lower-cased), or a message naming the entry and the field.
 */
export function parseClusters(raw: unknown): ClusterConfig[] | string {
  let list = raw;
  if (typeof raw === 'string') {
    try {
      list = JSON.parse(raw);
    } catch {
      return 'expected a JSON array of {"id", "url"} tables';
    }
  }
  if (!Array.isArray(list)) return 'expected an array of [[clusters]] tables';
  const out: ClusterConfig[] = [];
  for (let i = 0; i < list.length; i++) {
    const entry = list[i] as Record<string, unknown>;
    const at = `cluster ${i + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `${at}: expected a table`;
    for (const name of Object.keys(entry)) if (!KEYS.has(name)) return `${at}: unknown key ${name}`;
    const { id, url } = entry;
    if (typeof id !== 'string' || !UUID.test(id.trim())) return `${at}: id must be a UUID`;
    const lower = id.trim().toLowerCase();
    if (out.some((c) => c.id === lower)) return `${at}: id ${lower} is given twice`;
    if (lower === DEFAULT_CLUSTER_ID) return `${at}: id ${lower} is reserved for storage.url`;
    if (typeof url !== 'string') return `${at}: url must be a string`;
    const problem = postgresUrlProblem(url.trim());
    if (problem) return `${at}: ${problem}`;
    const window = entry.merge_window_ms ?? DEFAULT_MERGE_WINDOW_MS;
    const ms = typeof window === 'bigint' ? Number(window) : window;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_MERGE_WINDOW_MS)
      return `${at}: merge_window_ms must be an integer from 0 to ${MAX_MERGE_WINDOW_MS}`;
    out.push({ id: lower, url: url.trim(), mergeWindowMs: ms });
  }
  return out;
}

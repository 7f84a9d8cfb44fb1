// Ready-made dashboards for the data the intake writes (SPEC 12, docs/intake.md "Dashboards from
// templates"): Proxmox VE (node CPU and memory, guests, storage) and Telegraf's system inputs (cpu,
// mem, disk, net). A template is a list of dashboards; each is a POST /api/v1/dashboards body whose
// key is a pattern with one named group, offered only when the source holds keys it matches (the
// keys Explore lists); the group's select segment lists those keys' values. The widgets' paths are
// what the intake's mapping writes for a gauge: `<field>.sum` and `<field>.count` (the mean is their
// ratio, an expression row) and `<field>.last` (the bucket's latest sample, for counters and sizes).
// Shared by the interface (web/pages/source-intake-templates.tsx) and the unit test that checks them
// against the server's dashboard validation and the mapping (test/unit/dashboard-templates.test.ts).
import { rowLetter } from './expression';

export interface TemplateDashboard {
  /** the dashboard's name */
  name: string;
  /** the dashboard key: the series key with one named group, `(?<name>…)` */
  key: string;
  /** the segment's label (the picker's name) */
  label: string;
  /** keys matched by `key` but not wanted (Telegraf's `net,…,interface=all` holds protocol counters) */
  exclude?: string;
  /** the picker's label of one matched key, from its tags */
  itemLabel: (tags: Record<string, string>, value: string) => string;
  grid: Record<string, unknown>[];
}

export interface DashboardTemplate {
  id: string;
  name: string;
  /** what the data comes from, for the offer's text */
  sender: string;
  dashboards: TemplateDashboard[];
}

type Row = Record<string, unknown>;

/** Series rows that draw the mean of gauge fields (`a / b` of each field's sum and count). */
function means(fields: [field: string, label: string][], scale = 1): Row[] {
  const rows: Row[] = [];
  fields.forEach(([field, label], i) => {
    const sum = rowLetter(i * 3);
    const count = rowLetter(i * 3 + 1);
    rows.push({ kind: 'path', path: `${field}.sum`, visible: false });
    rows.push({ kind: 'path', path: `${field}.count`, visible: false });
    rows.push({
      kind: 'expression',
      expression: scale === 1 ? `${sum} / ${count}` : `${sum} / ${count} * ${scale}`,
      label,
    });
  });
  return rows;
}

/** Series rows of the bucket's latest sample of fields (counters' readings, sizes). */
const lasts = (fields: [field: string, label: string][]): Row[] =>
  fields.map(([field, label]) => ({ kind: 'path', path: `${field}.last`, label }));

/** Series rows of `used / total` as a percentage of two fields' latest samples. */
const percentOf = (used: string, total: string, label: string): Row[] => [
  { kind: 'path', path: `${used}.last`, visible: false },
  { kind: 'path', path: `${total}.last`, visible: false },
  { kind: 'expression', expression: 'a / b * 100', label },
];

const kpi = (id: string, title: string, series: Row[], x: number, y: number, w = 3): Row => ({
  id,
  type: 'kpi',
  title,
  series,
  function: 'mean',
  x,
  y,
  w,
  h: 2,
});

const chart = (
  id: string,
  title: string,
  series: Row[],
  x: number,
  y: number,
  w: number,
  extra: Row = {},
): Row => ({ id, type: 'timeseries', title, series, chart_type: 'line', x, y, w, h: 4, ...extra });

export const DASHBOARD_TEMPLATES: DashboardTemplate[] = [
  {
    id: 'proxmox',
    name: 'Proxmox VE',
    sender: 'Proxmox VE (InfluxDB, HTTP)',
    dashboards: [
      {
        name: 'Proxmox VE · nodes',
        key: 'cpustat,host=(?<node>[^,]+),object=nodes',
        label: 'Node',
        itemLabel: (tags) => tags.host ?? '',
        grid: [
          kpi('cpu', 'CPU used', means([['cpu', 'CPU %']], 100), 0, 0),
          kpi('iowait', 'IO wait', means([['wait', 'IO wait %']], 100), 3, 0),
          kpi('load', 'Load (1 min)', means([['avg1', 'load 1m']]), 6, 0),
          kpi('cpus', 'CPUs', lasts([['cpus', 'CPUs']]), 9, 0),
          chart(
            'cpu-time',
            'CPU',
            means(
              [
                ['cpu', 'used %'],
                ['wait', 'IO wait %'],
              ],
              100,
            ),
            0,
            2,
            6,
          ),
          chart(
            'load-avg',
            'Load average',
            means([
              ['avg1', '1 min'],
              ['avg5', '5 min'],
              ['avg15', '15 min'],
            ]),
            6,
            2,
            6,
          ),
        ],
      },
      {
        name: 'Proxmox VE · node memory',
        key: 'memory,host=(?<node>[^,]+),object=nodes',
        label: 'Node',
        itemLabel: (tags) => tags.host ?? '',
        grid: [
          kpi('mem-used', 'Memory used', percentOf('memused', 'memtotal', 'used %'), 0, 0, 4),
          kpi('swap-used', 'Swap used', lasts([['swapused', 'swap']]), 4, 0, 4),
          kpi('mem-total', 'Memory', lasts([['memtotal', 'total']]), 8, 0, 4),
          chart(
            'memory',
            'Memory (bytes)',
            lasts([
              ['memused', 'used'],
              ['memfree', 'free'],
              ['memtotal', 'total'],
            ]),
            0,
            2,
            12,
          ),
        ],
      },
      {
        name: 'Proxmox VE · guests',
        key: 'system,(?<guest>host=[^,]+,nodename=[^,]+,object=(?:qemu|lxc),vmid=[^,]+)',
        label: 'Guest',
        itemLabel: (tags) => `${tags.host ?? '?'} (${tags.vmid ?? '?'}, ${tags.object} on ${tags.nodename})`,
        grid: [
          kpi('cpu', 'CPU used', means([['cpu', 'CPU %']], 100), 0, 0),
          kpi('mem', 'Memory used', percentOf('mem', 'maxmem', 'memory %'), 3, 0),
          kpi('disk', 'Disk used', percentOf('disk', 'maxdisk', 'disk %'), 6, 0),
          kpi('uptime', 'Uptime (s)', lasts([['uptime', 'uptime']]), 9, 0),
          chart('cpu-time', 'CPU', means([['cpu', 'CPU %']], 100), 0, 2, 6),
          chart(
            'memory',
            'Memory (bytes)',
            lasts([
              ['mem', 'used'],
              ['maxmem', 'size'],
            ]),
            6,
            2,
            6,
          ),
          chart(
            'network',
            'Network (bytes since start)',
            lasts([
              ['netin', 'in'],
              ['netout', 'out'],
            ]),
            0,
            6,
            6,
          ),
          chart(
            'disk-io',
            'Disk IO (bytes since start)',
            lasts([
              ['diskread', 'read'],
              ['diskwrite', 'written'],
            ]),
            6,
            6,
            6,
          ),
        ],
      },
      {
        name: 'Proxmox VE · storage',
        key: 'system,(?<storage>host=[^,]+,nodename=[^,]+,object=storages,type=[^,]+)',
        label: 'Storage',
        itemLabel: (tags) => `${tags.host ?? '?'} (${tags.type} on ${tags.nodename})`,
        grid: [
          kpi('used', 'Used', percentOf('used', 'total', 'used %'), 0, 0, 4),
          kpi('avail', 'Available (bytes)', lasts([['avail', 'available']]), 4, 0, 4),
          kpi('total', 'Size (bytes)', lasts([['total', 'size']]), 8, 0, 4),
          chart(
            'space',
            'Space (bytes)',
            lasts([
              ['used', 'used'],
              ['avail', 'available'],
            ]),
            0,
            2,
            12,
          ),
        ],
      },
    ],
  },
  {
    id: 'telegraf',
    name: 'Telegraf system',
    sender: "Telegraf's cpu, mem, disk and net inputs",
    dashboards: [
      {
        name: 'Telegraf · CPU',
        key: 'cpu,cpu=cpu-total,host=(?<host>[^,]+)',
        label: 'Host',
        itemLabel: (tags) => tags.host ?? '',
        grid: [
          kpi('used', 'CPU used', [...means([['usage_idle', 'idle']]).slice(0, 2), used()], 0, 0, 4),
          kpi('iowait', 'IO wait', means([['usage_iowait', 'IO wait %']]), 4, 0, 4),
          kpi('steal', 'Steal', means([['usage_steal', 'steal %']]), 8, 0, 4),
          chart(
            'cpu',
            'CPU (%)',
            means([
              ['usage_user', 'user'],
              ['usage_system', 'system'],
              ['usage_iowait', 'IO wait'],
              ['usage_steal', 'steal'],
            ]),
            0,
            2,
            12,
            { chart_type: 'area', stacked: true },
          ),
        ],
      },
      {
        name: 'Telegraf · memory',
        key: 'mem,host=(?<host>[^,]+)',
        label: 'Host',
        itemLabel: (tags) => tags.host ?? '',
        grid: [
          kpi('used', 'Memory used', means([['used_percent', 'used %']]), 0, 0, 4),
          kpi('available', 'Available (bytes)', lasts([['available', 'available']]), 4, 0, 4),
          kpi('total', 'Memory (bytes)', lasts([['total', 'total']]), 8, 0, 4),
          chart(
            'memory',
            'Memory (bytes)',
            means([
              ['used', 'used'],
              ['available', 'available'],
            ]),
            0,
            2,
            12,
          ),
        ],
      },
      {
        name: 'Telegraf · disk',
        key: 'disk,(?<disk>.+)',
        label: 'Disk',
        itemLabel: (tags) => `${tags.host ?? '?'} ${tags.path ?? tags.device ?? ''}`.trim(),
        grid: [
          kpi('used', 'Used', means([['used_percent', 'used %']]), 0, 0, 4),
          kpi('free', 'Free (bytes)', lasts([['free', 'free']]), 4, 0, 4),
          kpi('inodes', 'Inodes used', lasts([['inodes_used', 'inodes']]), 8, 0, 4),
          chart(
            'space',
            'Space (bytes)',
            means([
              ['used', 'used'],
              ['free', 'free'],
            ]),
            0,
            2,
            12,
          ),
        ],
      },
      {
        name: 'Telegraf · network',
        key: 'net,(?<nic>host=[^,]+,interface=[^,]+)',
        label: 'Interface',
        exclude: 'interface=all$',
        itemLabel: (tags) => `${tags.host ?? '?'} ${tags.interface ?? ''}`.trim(),
        grid: [
          kpi('errors-in', 'Errors in', lasts([['err_in', 'errors in']]), 0, 0, 3),
          kpi('errors-out', 'Errors out', lasts([['err_out', 'errors out']]), 3, 0, 3),
          kpi('drops-in', 'Dropped in', lasts([['drop_in', 'dropped in']]), 6, 0, 3),
          kpi('drops-out', 'Dropped out', lasts([['drop_out', 'dropped out']]), 9, 0, 3),
          chart(
            'bytes',
            'Bytes since start (counters)',
            lasts([
              ['bytes_recv', 'received'],
              ['bytes_sent', 'sent'],
            ]),
            0,
            2,
            12,
          ),
        ],
      },
    ],
  },
];

/** `100 - idle`: the third row after usage_idle's sum and count. */
function used(): Row {
  return { kind: 'expression', expression: '100 - a / b', label: 'used %' };
}

/** The tags of a series key (`m,a=1,b=2` → {a: '1', b: '2'}), InfluxDB's escapes read. */
export function keyTags(key: string): Record<string, string> {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < key.length; i++) {
    const ch = key[i]!;
    if (ch === '\\' && i + 1 < key.length) {
      current += key[++i];
      continue;
    }
    if (ch === ',') {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  const tags: Record<string, string> = {};
  for (const part of parts.slice(1)) {
    const eq = part.indexOf('=');
    if (eq > 0) tags[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return tags;
}

export interface TemplateMatch {
  dashboard: TemplateDashboard;
  /** the group's values of the matched keys, with their labels, sorted by label */
  items: { value: string; label: string }[];
}

/** The template's dashboards whose keys are among `keys`, each with the values its segment lists. */
export function matchTemplate(template: DashboardTemplate, keys: readonly string[]): TemplateMatch[] {
  const out: TemplateMatch[] = [];
  for (const dashboard of template.dashboards) {
    const pattern = new RegExp(`^${dashboard.key}$`);
    const exclude = dashboard.exclude ? new RegExp(dashboard.exclude) : null;
    const items = new Map<string, string>();
    for (const key of keys) {
      const m = pattern.exec(key);
      const value = m?.groups ? Object.values(m.groups)[0] : undefined;
      if (value === undefined || value.length > 255 || (exclude && exclude.test(key))) continue;
      items.set(value, dashboard.itemLabel(keyTags(key), value) || value);
    }
    if (items.size === 0) continue;
    const sorted = [...items]
      .map(([value, label]) => ({ value, label }))
      .sort((a, b) => a.label.localeCompare(b.label));
    out.push({ dashboard, items: sorted });
  }
  return out;
}

/** The name of a dashboard key's one named group. */
export function groupName(key: string): string {
  return /\(\?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(key)![1]!;
}

/** The POST /api/v1/dashboards body of one matched dashboard for a source. */
export function templateBody(
  match: TemplateMatch,
  source: { type: 'project' | 'database'; id: string },
  groupId: string | null = null,
): Record<string, unknown> {
  const { dashboard, items } = match;
  return {
    name: dashboard.name,
    key: dashboard.key,
    source,
    ...(groupId ? { group_id: groupId } : {}),
    default_timeframe: '6h',
    segments: [
      {
        name: groupName(dashboard.key),
        label: dashboard.label,
        type: 'select',
        default_value: items[0]!.value,
        groups: [{ label: dashboard.label, items: items.map(({ value, label }) => ({ value, label })) }],
      },
    ],
    payload: { grid: dashboard.grid },
  };
}

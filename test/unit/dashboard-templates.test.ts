// The dashboard templates (src/shared/dashboard-templates.ts): each passes the server's dashboard
// validation (src/domain/dashboards), and each of its dashboards matches the keys the intake's
// mapping writes for a real Proxmox VE or Telegraf body, with every path of its widgets among the
// leaves the mapping writes for those keys, and every segment value giving back a real key.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DASHBOARD_TEMPLATES,
  groupName,
  keyTags,
  matchTemplate,
  templateBody,
  type DashboardTemplate,
} from '../../src/shared/dashboard-templates';
import { substituteKey } from '../../src/shared/key-segments';
import { parseLineProtocol } from '../../src/intake/line-protocol';
import { mapLineSamples } from '../../src/intake/mapping';
import { ErrorBag } from '../../src/domain/dashboards/issues';
import { normalizePayload } from '../../src/domain/dashboards/widgets';
import { normalizeSegments } from '../../src/domain/dashboards/segments';
import { proxmoxBody, telegrafBody } from '../helpers/intake-payloads';

/** Keys and the dot paths of every leaf the mapping writes under each. */
function mapped(body: string, precision: 'ns' | 's'): Map<string, Set<string>> {
  const { points } = mapLineSamples(parseLineProtocol(body, { precision }), { nowMs: Date.now() });
  const out = new Map<string, Set<string>>();
  const walk = (node: unknown, prefix: string, into: Set<string>) => {
    if (typeof node === 'number') into.add(prefix);
    else if (node && typeof node === 'object')
      for (const [k, v] of Object.entries(node)) walk(v, prefix ? `${prefix}.${k}` : k, into);
  };
  for (const point of points) {
    const leaves = out.get(point.key) ?? new Set<string>();
    walk(point.values, '', leaves);
    out.set(point.key, leaves);
  }
  return out;
}

const byId = (id: string): DashboardTemplate => DASHBOARD_TEMPLATES.find((t) => t.id === id)!;

/** Every `path` of a widget's series rows. */
const paths = (grid: Record<string, unknown>[]) =>
  grid.flatMap((w) =>
    ((w.series as Record<string, unknown>[] | undefined) ?? [])
      .filter((row) => row.kind === 'path')
      .map((row) => String(row.path)),
  );

const CASES = [
  { id: 'proxmox', data: () => mapped(proxmoxBody(), 'ns'), dashboards: 4 },
  {
    id: 'telegraf',
    data: () => {
      const both = mapped(telegrafBody('nas'), 's');
      for (const [k, v] of mapped(telegrafBody('pve1'), 's')) both.set(k, v);
      return both;
    },
    dashboards: 4,
  },
];

describe('dashboard templates', () => {
  test('every template passes the dashboard validation of the server', () => {
    for (const template of DASHBOARD_TEMPLATES) {
      for (const dashboard of template.dashboards) {
        const body = templateBody(
          { dashboard, items: [{ value: 'x', label: 'x' }] },
          { type: 'project', id: '00000000-0000-4000-8000-000000000000' },
        );
        const bag = new ErrorBag();
        normalizePayload(body.payload, bag);
        normalizeSegments(body.segments, bag);
        assert.doesNotThrow(() => bag.throwIfAny(), `${dashboard.name}`);
        assert.ok((body.key as string).length <= 255);
        assert.equal(groupName(dashboard.key).length > 0, true);
      }
    }
  });

  for (const c of CASES) {
    test(`${c.id}: every dashboard matches the mapped keys, and its paths are leaves of them`, () => {
      const data = c.data();
      const matches = matchTemplate(byId(c.id), [...data.keys()]);
      assert.equal(matches.length, c.dashboards, matches.map((m) => m.dashboard.name).join(', '));
      for (const match of matches) {
        const name = groupName(match.dashboard.key);
        for (const item of match.items) {
          const key = substituteKey(match.dashboard.key, [name], { [name]: item.value });
          const leaves = data.get(key);
          assert.ok(leaves, `${match.dashboard.name}: ${item.value} gives ${key}, a key the mapping wrote`);
          for (const path of paths(match.dashboard.grid))
            assert.ok(leaves.has(path), `${match.dashboard.name}: ${path} is written under ${key}`);
        }
      }
    });
  }

  test('segments: one item per matched key, labelled from its tags; protocol lines left out', () => {
    const proxmox = matchTemplate(byId('proxmox'), [...mapped(proxmoxBody(), 'ns').keys()]);
    const guests = proxmox.find((m) => m.dashboard.name === 'Proxmox VE · guests')!;
    assert.deepEqual(guests.items, [
      { value: 'host=dns,nodename=pve1,object=lxc,vmid=101', label: 'dns (101, lxc on pve1)' },
      { value: 'host=web,nodename=pve1,object=qemu,vmid=100', label: 'web (100, qemu on pve1)' },
    ]);
    const storage = proxmox.find((m) => m.dashboard.name === 'Proxmox VE · storage')!;
    assert.deepEqual(
      storage.items.map((i) => i.label),
      ['local (dir on pve1)', 'local-lvm (lvmthin on pve1)'],
    );
    const telegraf = matchTemplate(byId('telegraf'), [...mapped(telegrafBody('nas'), 's').keys()]);
    const net = telegraf.find((m) => m.dashboard.name === 'Telegraf · network')!;
    assert.deepEqual(net.items, [{ value: 'host=nas,interface=eth0', label: 'nas eth0' }]);
    const body = templateBody(net, { type: 'project', id: 'p' });
    assert.equal((body.segments as { default_value: string }[])[0]!.default_value, 'host=nas,interface=eth0');
  });

  test('no template is offered for keys it does not need', () => {
    assert.deepEqual(matchTemplate(byId('telegraf'), ['shop::SK::orders', 'cpu,cpu=cpu0,host=nas']), []);
    assert.deepEqual(matchTemplate(byId('proxmox'), [...mapped(telegrafBody(), 's').keys()]), []);
    // Telegraf without the disk input: the other three dashboards
    const keys = [...mapped(telegrafBody(), 's').keys()].filter((k) => !k.startsWith('disk,'));
    assert.equal(matchTemplate(byId('telegraf'), keys).length, 3);
  });

  test('keyTags reads escaped tag values', () => {
    assert.deepEqual(keyTags('disk,device=sda1,path=/mnt/a\\,b,host=nas'), {
      device: 'sda1',
      path: '/mnt/a,b',
      host: 'nas',
    });
  });
});

// A source's "Send data" section in a real browser (docs/interface.md): the Telegraf snippet gets a
// write token created from the page, the snippet read from the page is used as Telegraf would use
// it (the URL and the token, one line-protocol body through fetch) and the point reads back; the
// listeners bound to the source are listed; once Telegraf-shaped data is there, the "Telegraf
// system" template creates its dashboards and their widgets draw. Keyboard only where a person
// would use it; axe clean. With SCREENSHOTS=1 the screenshots go to docs/screenshots/
// (intake-snippets.png, intake-template.png); otherwise to a temp folder.
//   node build-web.mjs && SCREENSHOTS=1 node --import tsx --test test/browser/intake-ui.test.ts
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createProjectWithToken, request, type ProjectAgent } from '../helpers/server';
import { proxmoxBody, telegrafBody } from '../helpers/intake-payloads';
import { parseListeners, startListeners, type Listeners } from '../../src/intake/listeners';
import { browserSkipReason } from './browser';
import { seriousViolations } from './axe-check';
import { unsettled, waitForWidgets } from './demo-pages';
import { signedInPage, startHarness, type Harness } from './shell-helpers';

const KEEP = process.env.SCREENSHOTS === '1';
const OUT = KEEP
  ? path.join(import.meta.dirname, '..', '..', 'docs', 'screenshots')
  : mkdtempSync(path.join(os.tmpdir(), 'intake-shots-'));

describe('sending data from the source page', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let agent: ProjectAgent;
  let listeners: Listeners;

  before(async () => {
    h = await startHarness();
    agent = await createProjectWithToken(h.server, {
      name: 'homelab',
      granularities: ['1m', '1h', '1d'],
      default_timeframe: '24h',
      time_zone: 'UTC',
    });
    const parsed = parseListeners([
      { protocol: 'graphite', transport: 'tcp', listen: '127.0.0.1:0', source: agent.sourceId },
      {
        protocol: 'influx',
        transport: 'udp',
        listen: '127.0.0.1:0',
        source: agent.sourceId,
        precision: 'ms',
      },
    ]);
    assert.ok(Array.isArray(parsed), String(parsed));
    listeners = await startListeners(h.server.deps, parsed);
    mkdirSync(OUT, { recursive: true });
  });
  after(async () => {
    await listeners?.close();
    await h?.stop();
    if (!KEEP) rmSync(OUT, { recursive: true, force: true });
  });

  test('Telegraf: a write token from the snippet, the snippet used as is, then a dashboard from the template', async () => {
    const { context, page } = await signedInPage(h, agent.userToken, { width: 1280, height: 900 });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.server.url });
    await page.goto(`${h.server.url}/sources`);
    const panel = page.locator('section.panel[data-source="homelab"]');

    // Keyboard: the section opens from its summary, the sender and the token button take Enter.
    const summary = panel.locator('[data-testid="send-data"] > summary');
    await summary.focus();
    await page.keyboard.press('Enter');
    const sender = panel.getByRole('group', { name: 'Sender' });
    await sender.getByRole('button', { name: 'Telegraf' }).focus();
    await page.keyboard.press('Enter');
    assert.equal(await sender.getByRole('button', { name: 'Telegraf' }).getAttribute('aria-pressed'), 'true');
    const snippet = panel.getByTestId('snippet-telegraf-0');
    assert.match((await snippet.textContent())!, /token = "<write token>"/);

    // The listeners bound to this source, with their real ports and precision.
    const listed = panel.getByTestId('intake-listeners');
    const graphitePort = listeners.running[0]!.address.port;
    const influxPort = listeners.running[1]!.address.port;
    assert.match((await listed.textContent())!, new RegExp(`Graphite over TCPport ${graphitePort}`));
    assert.match(
      (await listed.textContent())!,
      new RegExp(`line protocol over UDPport ${influxPort}.*in ms`),
    );

    await panel.getByRole('button', { name: 'Create a write token for this' }).focus();
    await page.keyboard.press('Enter');
    await panel.getByRole('status').filter({ hasText: 'Telegraf on homelab' }).waitFor();
    const text = (await snippet.textContent())!;
    const url = /urls = \["([^"]+)"\]/.exec(text)?.[1];
    const token = /token = "([^"]+)"/.exec(text)?.[1];
    assert.equal(url, h.server.url, 'the server is the page origin');
    assert.ok(token && token !== '<write token>', text);

    // The copy button puts exactly the snippet on the clipboard.
    await panel.getByRole('button', { name: 'Copy telegraf.conf' }).click();
    await panel.getByRole('button', { name: 'Copied telegraf.conf' }).waitFor();
    assert.equal(
      await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      ),
      text,
    );

    // The token: write only, named after the sender and the source.
    const tokens = await request(
      h.server,
      'GET',
      `/api/v1/bootstrap/source-tokens?source_id=${agent.sourceId}`,
      undefined,
      {
        token: agent.userToken,
      },
    );
    const made = tokens.body.data.find((t: { name: string }) => t.name === 'Telegraf on homelab');
    assert.deepEqual([made?.read, made?.write], [false, true]);

    // What Telegraf's influxdb_v2 output sends with that configuration: POST <url>/api/v2/write with
    // its organization and bucket, `Authorization: Token`, nanosecond times.
    const at = Date.now() - 60_000;
    const written = await fetch(`${url}/api/v2/write?bucket=telegraf&org=homelab`, {
      method: 'POST',
      headers: { authorization: `Token ${token}`, 'content-type': 'text/plain; charset=utf-8' },
      body: `cpu,cpu=cpu-total,host=nas usage_idle=90,usage_user=1.25 ${BigInt(at) * 1_000_000n}\n`,
    });
    assert.equal(written.status, 204, await written.text());
    const minute = new Date(Math.floor(at / 60_000) * 60_000).toISOString().replace('.000Z', 'Z');
    const read = await request(
      h.server,
      'GET',
      `/api/v1/metrics?key=${encodeURIComponent('cpu,cpu=cpu-total,host=nas')}&from=${minute}&to=${minute}&granularity=1m`,
      undefined,
      { token: agent.sourceToken, sourceId: agent.sourceId },
    );
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.data.values[0], {
      usage_idle: { sum: 90, count: 1, last: 90 },
      usage_user: { sum: 1.25, count: 1, last: 1.25 },
    });

    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: path.join(OUT, 'intake-snippets.png'), fullPage: true });

    // Telegraf-shaped data every minute over the last six hours, two hosts, through the same token
    // (Telegraf's default interval is 10 s); user and system time trade places, idle stays at 90.
    const now = Math.floor(Date.now() / 60_000) * 60;
    const lines: string[] = [];
    for (let i = 360; i >= 2; i--) {
      for (const host of ['nas', 'pve1']) {
        const user = (5 + 3 * Math.sin(i / 20 + (host === 'nas' ? 0 : 1))).toFixed(2);
        const system = (8.3 - Number(user)).toFixed(2);
        lines.push(
          telegrafBody(host, now - i * 60)
            .replace('usage_system=3.3', `usage_system=${system}`)
            .replace('usage_user=5 ', `usage_user=${user} `),
        );
      }
    }
    for (let from = 0; from < lines.length; from += 240) {
      const batch = await fetch(`${url}/api/v2/write?bucket=telegraf&org=homelab&precision=s`, {
        method: 'POST',
        headers: { authorization: `Token ${token}` },
        body: lines.slice(from, from + 240).join('\n'),
      });
      assert.equal(batch.status, 204, await batch.text());
    }

    const templates = panel.getByRole('list', { name: 'Dashboard templates' });
    await panel.getByRole('button', { name: 'Look again' }).click();
    const offer = templates.locator('li[data-template="telegraf"]');
    await offer.waitFor();
    assert.match((await offer.textContent())!, /CPU \(nas, pve1\)/);
    assert.match((await offer.textContent())!, /network \(nas eth0, pve1 eth0\)/);
    assert.equal(
      await templates.locator('li[data-template="proxmox"]').count(),
      0,
      'no Proxmox data, no offer',
    );
    await offer.getByRole('button', { name: /Create 4 dashboards/ }).focus();
    await page.keyboard.press('Enter');
    const created = offer.getByRole('status');
    await created.getByRole('link', { name: 'Telegraf · CPU' }).waitFor();
    assert.deepEqual(await created.getByRole('link').allTextContents(), [
      'Telegraf · CPU',
      'Telegraf · memory',
      'Telegraf · disk',
      'Telegraf · network',
    ]);
    assert.deepEqual(await seriousViolations(page), []);

    await created.getByRole('link', { name: 'Telegraf · CPU' }).click();
    await page.waitForURL(/\/d\//);
    const states = await waitForWidgets(page, 4);
    assert.deepEqual(unsettled(states.states), [], JSON.stringify(states.states));
    assert.equal(await page.getByTestId('dashboard-key').textContent(), 'cpu,cpu=cpu-total,host=nas');
    // the kpi: the mean over the buckets of 100 - usage_idle, 10 % in each
    assert.match((await page.locator('[data-widget-id="used"]').textContent())!, /%10$/);
    const line = page.locator('[data-widget-id="cpu"] canvas, [data-widget-id="cpu"] svg');
    assert.ok((await line.count()) > 0, 'the CPU chart draws');
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: path.join(OUT, 'intake-template.png'), fullPage: true });

    // The group of the template holds the four dashboards.
    const list = await request(h.server, 'GET', '/api/v1/dashboards', undefined, { token: agent.userToken });
    const mine = list.body.data.filter((d: { name: string }) => d.name.startsWith('Telegraf · '));
    assert.equal(mine.length, 4);
    assert.equal(new Set(mine.map((d: { group_id: string }) => d.group_id)).size, 1);
    await context.close();
  });

  test('Proxmox VE: its token from the page, its HTTP write, then nodes, guests and storage from the template', async () => {
    const { context, page } = await signedInPage(h, agent.userToken, { width: 1280, height: 900 });
    await page.goto(`${h.server.url}/sources`);
    const panel = page.locator('section.panel[data-source="homelab"]');
    await panel.locator('[data-testid="send-data"] > summary').click();
    await panel.getByRole('group', { name: 'Sender' }).getByRole('button', { name: 'Proxmox VE' }).click();
    await panel.getByRole('button', { name: 'Create a write token for this' }).click();
    await panel.getByRole('status').filter({ hasText: 'Proxmox VE on homelab' }).waitFor();
    const fields = (await panel.getByTestId('snippet-proxmox-0').textContent())!;
    const field = (name: string) => new RegExp(`^${name}: +(.+)$`, 'm').exec(fields)?.[1];
    const origin = new URL(h.server.url);
    assert.equal(field('Server'), origin.hostname);
    assert.equal(field('Port'), origin.port);
    assert.equal(field('Protocol'), 'HTTP');
    // What Proxmox VE's InfluxDB plugin sends in HTTP mode: its organization and bucket, a Token
    // header, nanoseconds without a precision parameter; every 10 s, here every minute for 2 hours.
    const url = `${field('Protocol')!.toLowerCase()}://${field('Server')}:${field('Port')}/api/v2/write?org=${field('Organization')}&bucket=${field('Bucket')}`;
    const start = BigInt(Math.floor(Date.now() / 60_000) * 60 - 7200) * 1_000_000_000n;
    const bodies = Array.from({ length: 119 }, (_, i) => proxmoxBody(i * 60, start));
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Token ${field('Token')}` },
      body: bodies.join('\n'),
    });
    assert.equal(res.status, 204, await res.text());

    await panel.getByRole('button', { name: 'Look again' }).click();
    const offer = panel.locator('li[data-template="proxmox"]');
    await offer.waitFor();
    assert.match(
      (await offer.textContent())!,
      /guests \(dns \(101, lxc on pve1\), web \(100, qemu on pve1\)\)/,
    );
    await offer.getByRole('button', { name: /Create 4 dashboards/ }).click();
    const created = offer.getByRole('status');
    await created.getByRole('link', { name: 'Proxmox VE · guests' }).waitFor();
    assert.deepEqual(await created.getByRole('link').allTextContents(), [
      'Proxmox VE · nodes',
      'Proxmox VE · node memory',
      'Proxmox VE · guests',
      'Proxmox VE · storage',
    ]);
    for (const [name, widgets, key] of [
      ['Proxmox VE · nodes', 6, 'cpustat,host=pve1,object=nodes'],
      ['Proxmox VE · guests', 8, 'system,host=dns,nodename=pve1,object=lxc,vmid=101'],
      ['Proxmox VE · storage', 4, 'system,host=local,nodename=pve1,object=storages,type=dir'],
    ] as const) {
      const list = await request(h.server, 'GET', '/api/v1/dashboards', undefined, {
        token: agent.userToken,
      });
      const id = list.body.data.find((d: { name: string }) => d.name === name).id;
      await page.goto(`${h.server.url}/d/${id}`);
      const states = await waitForWidgets(page, widgets);
      assert.deepEqual(unsettled(states.states), [], `${name}: ${JSON.stringify(states.states)}`);
      assert.equal(await page.getByTestId('dashboard-key').textContent(), key);
      assert.deepEqual(await seriousViolations(page), []);
      // the first guest by label is dns: its memory use is 64 MiB of 512 MiB
      if (name === 'Proxmox VE · guests')
        assert.match((await page.locator('[data-widget-id="mem"]').textContent())!, /%12\.5$/);
    }
    await context.close();
  });
});

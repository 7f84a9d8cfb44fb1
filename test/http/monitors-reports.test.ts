// Report monitors through the real server with a clock the test controls (as
// monitors-evaluation.test.ts): a dashboard's widgets' data, read over the report's window, goes
// once per period to a webhook (the JSON inline), an ntfy topic (a summary) and an e-mail channel
// (CSV and JSON attachments), received by an HTTP receiver and a real SMTP server on loopback.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { startReceiver, type Receiver } from './channels-receiver';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Part {
  headers: Record<string, string>;
  body: string;
}

/** The parts of a multipart MIME message (one level), bodies decoded (base64, quoted-printable). */
function mimeParts(raw: string): { headers: Record<string, string>; parts: Part[] } {
  const split = (text: string): Part => {
    const at = text.indexOf('\r\n\r\n');
    const headers: Record<string, string> = {};
    for (const line of text
      .slice(0, at)
      .replace(/\r\n[ \t]+/g, ' ')
      .split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    let body = text.slice(at + 4);
    const encoding = headers['content-transfer-encoding'] ?? '';
    if (/base64/i.test(encoding)) body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    else if (/quoted-printable/i.test(encoding))
      body = Buffer.from(
        body
          .replace(/=\r\n/g, '')
          .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
        'latin1',
      ).toString('utf8');
    return { headers, body };
  };
  const top = split(raw);
  const boundary = /boundary="?([^";]+)"?/.exec(top.headers['content-type'] ?? '')?.[1];
  if (!boundary) return { headers: top.headers, parts: [top] };
  const parts = raw
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((chunk) => split(chunk.replace(/^\r\n/, '').replace(/\r\n$/, '')));
  return { headers: top.headers, parts };
}

describe('report monitors with a controlled clock', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  let receiver: Receiver;
  let smtp: SMTPServer;
  const mails: string[] = [];
  const channels: Record<string, string> = {};
  let dashboardId: string;
  // midnight UTC two days ago: day 0 holds the data, reports run on day 1 and day 2
  const base = Math.floor(Date.now() / DAY) * DAY - 2 * DAY;
  let clock = base;

  const call = (method: string, path: string, body?: unknown) =>
    request(server, method, path, body, { token: agent.userToken });
  async function roundAt(ms: number) {
    clock = ms;
    const stats = await server.deps.ops.alerts.evaluator.round();
    await server.deps.ops.alerts.outbox.drain();
    return stats;
  }
  const hooks = () => receiver.received.filter((r) => r.path === '/hook');
  const ntfys = () => receiver.received.filter((r) => r.path === '/ntfy/reports');
  const reportBody = (extra: Record<string, unknown> = {}) => ({
    name: 'Daily shop',
    type: 'report',
    status: 'active',
    source_type: 'project',
    source_id: agent.sourceId,
    dashboard_id: dashboardId,
    report_settings: { frequency: 'daily', timeframe: '24h', granularity: '1h' },
    delivery_media: [{ medium: 'file_csv' }, { medium: 'file_json' }],
    delivery_channels: [
      { channel_id: channels.hook },
      { channel_id: channels.ntfy },
      { channel_id: channels.mail },
    ],
    ...extra,
  });

  before(async () => {
    smtp = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push(Buffer.concat(chunks).toString('utf8'));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    receiver = await startReceiver();
    server = await startTestServer(
      {
        SERVICE_SMTP_HOST: '127.0.0.1',
        SERVICE_SMTP_PORT: String((smtp.server.address() as AddressInfo).port),
        SERVICE_SMTP_TLS: 'none',
        SERVICE_SMTP_FROM: 'Reports <reports@example.com>',
      },
      { now: () => clock, alertsTimer: false },
    );
    agent = await createProjectWithToken(server);
    for (const [name, body] of Object.entries({
      hook: { type: 'webhook', settings: { url: `${receiver.url}/hook` } },
      ntfy: { type: 'ntfy', settings: { server: `${receiver.url}/ntfy`, topic: 'reports' } },
      mail: { type: 'email', settings: { to: ['ops@example.com'] } },
    })) {
      const res = await call('POST', '/api/v1/channels', { name, ...body });
      assert.equal(res.status, 201, res.text);
      channels[name] = res.body.data.id;
    }
    const dashboard = await call('POST', '/api/v1/dashboards', {
      name: 'Shop, daily',
      key: 'orders',
      source: { type: 'project', id: agent.sourceId },
      payload: {
        grid: [
          { id: 'k', type: 'kpi', title: 'Orders', path: 'count' },
          { id: 'note', type: 'text', title: 'Read me' },
          { id: 'c', type: 'timeseries', title: 'By country', series: [{ kind: 'path', path: 'country.*' }] },
          {
            id: 'g',
            type: 'group',
            title: 'Money',
            children: [
              {
                id: 'r',
                type: 'table',
                title: '=Revenue',
                series: [
                  { kind: 'path', path: 'revenue', visible: false },
                  { kind: 'path', path: 'count', visible: false },
                  { kind: 'expression', expression: 'a / b', label: 'per order' },
                ],
              },
            ],
          },
        ],
      },
    });
    assert.equal(dashboard.status, 201, dashboard.text);
    dashboardId = dashboard.body.data.id;
    // day 0: one point an hour; hour 5 has none
    for (let h = 0; h < 24; h++) {
      if (h === 5) continue;
      const res = await request(
        server,
        'POST',
        '/api/v1/metrics',
        {
          key: 'orders',
          at: new Date(base + h * HOUR + 60_000).toISOString(),
          values: { count: h + 1, revenue: (h + 1) * (h + 2), country: { US: h, DE: 1 } },
        },
        { token: agent.sourceToken, sourceId: agent.sourceId },
      );
      assert.equal(res.status, 201, res.text);
    }
  });
  after(async () => {
    await server.stop();
    await receiver.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  test('a report monitor is checked when saved: its dashboard, frequency and window (422 naming the field)', async () => {
    const none = await call('POST', '/api/v1/monitors', reportBody({ dashboard_id: undefined }));
    assert.equal(none.status, 422, none.text);
    assert.deepEqual(none.body.errors.dashboard_id, ['is required for report monitors']);
    const bad = await call(
      'POST',
      '/api/v1/monitors',
      reportBody({
        dashboard_id: '00000000-0000-4000-8000-000000000000',
        report_settings: { frequency: 'yearly', timeframe: 'soon', granularity: '7s' },
      }),
    );
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(Object.keys(bad.body.errors).sort(), ['dashboard_id', 'report_settings.frequency']);
    const window = await call(
      'POST',
      '/api/v1/monitors',
      reportBody({ report_settings: { frequency: 'daily', timeframe: 'soon', granularity: '7s' } }),
    );
    assert.equal(window.status, 422, window.text);
    assert.deepEqual(Object.keys(window.body.errors).sort(), [
      'report_settings.granularity',
      'report_settings.timeframe',
    ]);
  });

  test('once per period: the widgets data as JSON (webhook), a summary (ntfy), CSV and JSON files (e-mail)', async () => {
    const created = await call('POST', '/api/v1/monitors', reportBody());
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;

    // Day 1, 00:30: the first round sends the day's report (the 24 hourly buckets of day 0).
    const stats = await roundAt(base + DAY + 30 * 60_000);
    assert.equal(stats.reports, 1);
    assert.equal(hooks().length, 1);
    assert.equal(ntfys().length, 1);
    assert.equal(mails.length, 1);

    const hook = JSON.parse(hooks()[0]!.body);
    assert.equal(hook.kind, 'report');
    assert.equal(hook.title, 'Report: Daily shop');
    assert.ok(hooks()[0]!.headers['x-idempotency-key']);
    const data = hook.report;
    assert.equal(data.dashboard.id, dashboardId);
    assert.equal(data.granularity, '1h');
    assert.equal(data.at.length, 24);
    assert.equal(data.from, new Date(base).toISOString().replace('.000Z', 'Z'));
    assert.deepEqual(
      data.widgets.map((w: any) => [w.id, w.columns.map((c: any) => c.name)]),
      [
        ['k', ['count']],
        ['c', ['country.DE', 'country.US']],
        ['r', ['per order']],
      ],
      'the text widget is left out, hidden rows too, group children in their place',
    );
    const expected = (f: (h: number) => number) =>
      Array.from({ length: 24 }, (_, h) => (h === 5 ? null : f(h)));
    assert.deepEqual(
      data.widgets[0].columns[0].values,
      expected((h) => h + 1),
    );
    assert.deepEqual(
      data.widgets[1].columns[1].values,
      expected((h) => h),
    );
    assert.deepEqual(
      data.widgets[2].columns[0].values,
      expected((h) => h + 2),
      'revenue / count',
    );

    const ntfy = ntfys()[0]!;
    assert.equal(ntfy.headers.title, 'Report: Daily shop');
    assert.match(ntfy.body, /^Shop, daily: 3 widgets, 4 series, 24 buckets of 1h from /);

    const { headers, parts } = mimeParts(mails[0]!);
    assert.match(headers.subject!, /Report: Daily shop/);
    assert.match(parts[0]!.body, /Attached: Shop-daily-\d{4}-\d\d-\d\dT0000\.csv, Shop-daily-.*\.json/);
    const csvPart = parts.find((p) => /text\/csv/.test(p.headers['content-type'] ?? ''))!;
    assert.ok(csvPart, 'a CSV attachment');
    assert.match(csvPart.headers['content-disposition']!, /attachment; filename=.*\.csv/);
    const lines = csvPart.body.split('\r\n');
    assert.equal(
      lines[0],
      "at,Orders: count,By country: country.DE,By country: country.US,'=Revenue: per order",
      'a title a spreadsheet would run as a formula is quoted',
    );
    assert.equal(lines.length, 1 + 24 + 1);
    assert.match(lines[4]!, /^\d{4}-\d\d-\d\dT03:00:00Z,4,1,3,5$/);
    assert.match(lines[6]!, /^\d{4}-\d\d-\d\dT05:00:00Z,,,,$/, 'the missing hour is empty');
    const jsonPart = parts.find((p) => /application\/json/.test(p.headers['content-type'] ?? ''))!;
    assert.deepEqual(JSON.parse(jsonPart.body), data, 'the JSON file is the webhook report');

    // Later the same day: nothing new; the history holds the run.
    await roundAt(base + DAY + 5 * HOUR);
    await roundAt(base + DAY + 23 * HOUR + 59 * 60_000);
    assert.equal(hooks().length, 1);
    assert.equal(mails.length, 1);
    const history = (await call('GET', `/api/v1/monitors/${id}/history`)).body.data;
    assert.equal(history.length, 1);
    assert.match(history[0].summary, /^report for .*: Shop, daily: 3 widgets/);

    // Day 2: the next period's report, with its own idempotency key.
    await roundAt(base + 2 * DAY + 10 * 60_000);
    assert.equal(hooks().length, 2);
    assert.equal(ntfys().length, 2);
    assert.equal(mails.length, 2);
    assert.notEqual(hooks()[1]!.headers['x-idempotency-key'], hooks()[0]!.headers['x-idempotency-key']);
    assert.equal(
      JSON.parse(hooks()[1]!.body).report.widgets[0].columns[0].values.filter((v: unknown) => v !== null)
        .length,
      0,
      'day 1 has no data',
    );

    // Paused: not sent on day 3.
    await call('PUT', `/api/v1/monitors/${id}`, { status: 'paused' });
    await roundAt(base + 3 * DAY + 10 * 60_000);
    assert.equal(hooks().length, 2);
    await call('DELETE', `/api/v1/monitors/${id}`);
  });

  test('hourly, CSV only; a dashboard deleted later is an error in the history, recorded once', async () => {
    const dash = await call('POST', '/api/v1/dashboards', {
      name: 'Short-lived',
      key: 'orders',
      source: { type: 'project', id: agent.sourceId },
      payload: { grid: [{ id: 'k', type: 'kpi', title: 'Orders', path: 'count' }] },
    });
    assert.equal(dash.status, 201, dash.text);
    const created = await call(
      'POST',
      '/api/v1/monitors',
      reportBody({
        name: 'Hourly',
        dashboard_id: dash.body.data.id,
        report_settings: { frequency: 'hourly', timeframe: '3h', granularity: '1h' },
        delivery_media: [{ medium: 'file_csv' }],
        delivery_channels: [{ channel_id: channels.mail }],
      }),
    );
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    const before = mails.length;
    await roundAt(base + 4 * HOUR + 10 * 60_000);
    await roundAt(base + 4 * HOUR + 50 * 60_000);
    await roundAt(base + 5 * HOUR + 1 * 60_000);
    assert.equal(mails.length, before + 2, 'one report an hour');
    const { parts } = mimeParts(mails[before]!);
    assert.equal(parts.filter((p) => /attachment/.test(p.headers['content-disposition'] ?? '')).length, 1);
    const csv = parts.find((p) => /text\/csv/.test(p.headers['content-type'] ?? ''))!.body.split('\r\n');
    assert.deepEqual(
      csv.slice(1, 4).map((l) => l.split(',')[1]),
      ['2', '3', '4'],
      'hours 1..3 of day 0',
    );

    const removed = await call('DELETE', `/api/v1/dashboards/${dash.body.data.id}`);
    assert.equal(removed.status, 200, removed.text);
    await roundAt(base + 6 * HOUR + 1 * 60_000);
    await roundAt(base + 7 * HOUR + 1 * 60_000);
    assert.equal(mails.length, before + 2);
    const history = (await call('GET', `/api/v1/monitors/${id}/history`)).body.data;
    assert.deepEqual(
      history.map((h: any) => `${h.from}>${h.to}`),
      ['ok>error', 'ok>ok', 'ok>ok'],
    );
    assert.match(history[0].summary, /dashboard_id must be the id of a dashboard/);
  });
});

// The sender configuration of a source's "Send data" section (web/lib/intake-snippets.ts): the
// page's origin as the server (its port, or 80/443), the token or its placeholder, and collectd's
// choice of a Graphite listener, a millisecond line-protocol listener, or the listener to add.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SENDER_IDS,
  senderConfig,
  TOKEN_PLACEHOLDER,
  type IntakeListener,
} from '../../web/lib/intake-snippets';

const listener = (fields: Partial<IntakeListener>): IntakeListener => ({
  protocol: 'graphite',
  transport: 'tcp',
  listen: '0.0.0.0:2003',
  host: '0.0.0.0',
  port: 2003,
  precision: null,
  flush_interval_ms: null,
  key_prefix: '',
  ...fields,
});
const base = { origin: 'http://metrics.lan:4000', sourceId: 'src-1', token: 'svc_sat_abc', listeners: [] };

test('every sender with a token carries it, and the placeholder without one', () => {
  for (const id of SENDER_IDS) {
    const filled = senderConfig(id, base);
    const text = filled.blocks.map((b) => b.text).join('\n');
    if (filled.needsToken) assert.ok(text.includes('svc_sat_abc'), id);
    const empty = senderConfig(id, { ...base, token: null });
    if (empty.needsToken)
      assert.ok(
        empty.blocks.some((b) => b.text.includes(TOKEN_PLACEHOLDER)),
        id,
      );
    assert.ok(!text.includes('undefined') && !text.includes('null'), `${id}: ${text}`);
  }
});

test("the server is the page's origin: host, port (80 or 443 when the URL has none), scheme", () => {
  const proxmox = senderConfig('proxmox', { ...base, origin: 'https://metrics.example.org' }).blocks[0]!.text;
  assert.match(proxmox, /Server: +metrics\.example\.org\nPort: +443\nProtocol: +HTTPS/);
  const ha = senderConfig('home-assistant', base).blocks[0]!.text;
  assert.match(ha, /host: metrics\.lan\n  port: 4000\n  ssl: false/);
  assert.match(ha, /password: svc_sat_abc/);
  const telegraf = senderConfig('telegraf', base).blocks[0]!.text;
  assert.match(telegraf, /urls = \["http:\/\/metrics\.lan:4000"\]\n  token = "svc_sat_abc"/);
  const prom = senderConfig('prometheus', base).blocks;
  assert.match(
    prom[0]!.text,
    /url: http:\/\/metrics\.lan:4000\/api\/v1\/write\n    authorization:\n      credentials: svc_sat_abc/,
  );
  assert.match(prom[1]!.text, /-remoteWrite.bearerToken=svc_sat_abc/);
  const otel = senderConfig('otel', base).blocks;
  assert.match(otel[0]!.text, /ENDPOINT=http:\/\/metrics\.lan:4000\/v1\/metrics/);
  assert.match(otel[0]!.text, /HEADERS=Authorization=Bearer%20svc_sat_abc/);
  assert.match(otel[1]!.text, /Authorization: Bearer svc_sat_abc/);
});

test('collectd: a Graphite listener (TCP first), else a millisecond line-protocol one, else the listener to add', () => {
  const graphite = senderConfig('collectd', {
    ...base,
    listeners: [
      listener({ transport: 'udp', port: 2004, host: '10.0.0.5', listen: '10.0.0.5:2004' }),
      listener({}),
    ],
  });
  assert.equal(graphite.needsToken, false);
  assert.match(graphite.blocks[0]!.text, /Host "metrics\.lan"\n    Port "2003"\n    Protocol "tcp"/);
  const udpOnly = senderConfig('collectd', {
    ...base,
    listeners: [listener({ transport: 'udp', port: 2004, host: '10.0.0.5', listen: '10.0.0.5:2004' })],
  });
  assert.match(udpOnly.blocks[0]!.text, /Host "10\.0\.0\.5"\n    Port "2004"\n    Protocol "udp"/);
  const influx = senderConfig('collectd', {
    ...base,
    listeners: [listener({ protocol: 'influx', transport: 'udp', port: 8089, precision: 'ms' })],
  });
  assert.match(influx.blocks[0]!.text, /write_influxdb_udp[\s\S]*<Server "metrics\.lan" "8089">/);
  for (const listeners of [[], [listener({ protocol: 'influx', transport: 'udp', precision: 'ns' })]]) {
    const none = senderConfig('collectd', { ...base, listeners });
    assert.equal(none.blocks.length, 2);
    assert.match(
      none.blocks[0]!.text,
      /\[\[intake\.listeners\]\]\nprotocol = "graphite"[\s\S]*source = "src-1"/,
    );
    assert.match(none.blocks[1]!.text, /Host "metrics\.lan"\n    Port "2003"/);
  }
});

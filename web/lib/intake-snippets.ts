// Ready-to-paste sender configuration for a source (docs/intake.md, SPEC 12): Proxmox VE, Home
// Assistant, Telegraf, collectd, vmagent/Prometheus and OpenTelemetry, with the service's URL (the
// page's origin) and a write token filled in. Pure: the page (web/pages/source-intake.tsx) renders
// what this returns; test/browser/intake-ui.test.ts pastes one into a real request.

export interface IntakeListener {
  protocol: 'graphite' | 'influx' | 'statsd';
  transport: 'udp' | 'tcp';
  listen: string;
  host: string;
  port: number;
  precision: string | null;
  flush_interval_ms: number | null;
  key_prefix: string;
}

export interface SnippetBlock {
  title: string;
  text: string;
}

export interface Sender {
  id: 'proxmox' | 'home-assistant' | 'telegraf' | 'collectd' | 'prometheus' | 'otel';
  label: string;
  /** one sentence: where the configuration goes */
  intro: string;
  /** the snippets need a source token with write (collectd writes to an unauthenticated listener) */
  needsToken: boolean;
  blocks: SnippetBlock[];
}

export const SENDER_IDS: Sender['id'][] = [
  'proxmox',
  'home-assistant',
  'telegraf',
  'collectd',
  'prometheus',
  'otel',
];

export const SENDER_LABELS: Record<Sender['id'], string> = {
  proxmox: 'Proxmox VE',
  'home-assistant': 'Home Assistant',
  telegraf: 'Telegraf',
  collectd: 'collectd',
  prometheus: 'vmagent / Prometheus',
  otel: 'OpenTelemetry',
};

export const TOKEN_PLACEHOLDER = '<write token>';

interface Where {
  /** `http://host:port` of the service, as the browser reaches it */
  origin: string;
  hostname: string;
  port: number;
  https: boolean;
}

function where(origin: string): Where {
  const url = new URL(origin);
  const https = url.protocol === 'https:';
  const port = url.port ? Number(url.port) : https ? 443 : 80;
  return { origin: url.origin, hostname: url.hostname, port, https };
}

/** The address a sender reaches a listener at: its own host, or the service's when it listens on all. */
export function listenerHost(listener: IntakeListener, serviceHost: string): string {
  const any = ['0.0.0.0', '::', ''].includes(listener.host);
  return any ? serviceHost : listener.host;
}

export const listenerLabel = (l: IntakeListener): string =>
  l.protocol === 'influx' ? 'line protocol' : l.protocol === 'graphite' ? 'Graphite' : 'StatsD';

function collectdBlocks(w: Where, sourceId: string, listeners: IntakeListener[]): SnippetBlock[] {
  const graphite =
    listeners.find((l) => l.protocol === 'graphite' && l.transport === 'tcp') ??
    listeners.find((l) => l.protocol === 'graphite');
  if (graphite) {
    return [
      {
        title: `collectd.conf: write_graphite to the Graphite listener (${graphite.transport.toUpperCase()} ${graphite.port})`,
        text: [
          'LoadPlugin write_graphite',
          '<Plugin write_graphite>',
          '  <Node "trifle">',
          `    Host "${listenerHost(graphite, w.hostname)}"`,
          `    Port "${graphite.port}"`,
          `    Protocol "${graphite.transport}"`,
          '  </Node>',
          '</Plugin>',
        ].join('\n'),
      },
    ];
  }
  const influx = listeners.find((l) => l.protocol === 'influx' && l.transport === 'udp');
  if (influx && influx.precision === 'ms') {
    return [
      {
        title: `collectd.conf: write_influxdb_udp to the line protocol listener (UDP ${influx.port}, milliseconds)`,
        text: [
          'LoadPlugin write_influxdb_udp',
          '<Plugin write_influxdb_udp>',
          `  <Server "${listenerHost(influx, w.hostname)}" "${influx.port}">`,
          '  </Server>',
          '</Plugin>',
        ].join('\n'),
      },
    ];
  }
  // collectd's write_http sends its own JSON or command format, which the service does not read:
  // it needs a listener, which only the service's configuration can add.
  return [
    {
      title: "The service's config.toml: a Graphite listener for this source (then restart the service)",
      text: [
        '[[intake.listeners]]',
        'protocol = "graphite"',
        'transport = "tcp"',
        'listen = "0.0.0.0:2003"',
        `source = "${sourceId}"`,
      ].join('\n'),
    },
    {
      title: 'collectd.conf: write_graphite to it',
      text: [
        'LoadPlugin write_graphite',
        '<Plugin write_graphite>',
        '  <Node "trifle">',
        `    Host "${w.hostname}"`,
        '    Port "2003"',
        '    Protocol "tcp"',
        '  </Node>',
        '</Plugin>',
      ].join('\n'),
    },
  ];
}

/** Every sender's configuration for this source; `token` null puts a placeholder in. */
export function senderConfig(
  id: Sender['id'],
  options: { origin: string; sourceId: string; token: string | null; listeners: IntakeListener[] },
): Sender {
  const w = where(options.origin);
  const token = options.token ?? TOKEN_PLACEHOLDER;
  const label = SENDER_LABELS[id];
  switch (id) {
    case 'proxmox':
      return {
        id,
        label,
        needsToken: true,
        intro:
          'Datacenter → Metric Server → Add → InfluxDB, with these fields (Proxmox writes every node, guest and storage every 10 seconds).',
        blocks: [
          {
            title: 'InfluxDB metric server',
            text: [
              'Name:          trifle',
              `Server:        ${w.hostname}`,
              `Port:          ${w.port}`,
              `Protocol:      ${w.https ? 'HTTPS' : 'HTTP'}`,
              'Organization:  proxmox',
              'Bucket:        proxmox',
              `Token:         ${token}`,
            ].join('\n'),
          },
        ],
      };
    case 'home-assistant':
      return {
        id,
        label,
        needsToken: true,
        intro: "Add to configuration.yaml and restart Home Assistant (its InfluxDB integration's v1 mode).",
        blocks: [
          {
            title: 'configuration.yaml',
            text: [
              'influxdb:',
              '  api_version: 1',
              `  host: ${w.hostname}`,
              `  port: ${w.port}`,
              `  ssl: ${w.https}`,
              '  database: home_assistant',
              '  username: homeassistant',
              `  password: ${token}`,
              '  max_retries: 3',
            ].join('\n'),
          },
        ],
      };
    case 'telegraf':
      return {
        id,
        label,
        needsToken: true,
        intro:
          'Put in /etc/telegraf/telegraf.d/trifle.conf and restart Telegraf; the inputs are the ones the “Telegraf system” dashboards read.',
        blocks: [
          {
            title: 'telegraf.conf',
            text: [
              '[[outputs.influxdb_v2]]',
              `  urls = ["${w.origin}"]`,
              `  token = "${token}"`,
              '  organization = "homelab"',
              '  bucket = "telegraf"',
              '',
              '[[inputs.cpu]]',
              '  percpu = false',
              '  totalcpu = true',
              '[[inputs.mem]]',
              '[[inputs.disk]]',
              '  ignore_fs = ["tmpfs", "devtmpfs", "devfs", "iso9660", "overlay", "aufs", "squashfs"]',
              '[[inputs.net]]',
              '[[inputs.system]]',
            ].join('\n'),
          },
        ],
      };
    case 'collectd':
      return {
        id,
        label,
        needsToken: false,
        intro:
          'collectd writes to a listener of the service (no token: the listener is bound to this source), so listen on a private address.',
        blocks: collectdBlocks(w, options.sourceId, options.listeners),
      };
    case 'prometheus':
      return {
        id,
        label,
        needsToken: true,
        intro: 'Remote write 1.0: Prometheus, vmagent, Grafana Alloy and Netdata send what they scrape.',
        blocks: [
          {
            title: 'prometheus.yml',
            text: [
              'remote_write:',
              `  - url: ${w.origin}/api/v1/write`,
              '    authorization:',
              `      credentials: ${token}`,
            ].join('\n'),
          },
          {
            title: 'vmagent',
            text: [
              'vmagent -promscrape.config=scrape.yml \\',
              `  -remoteWrite.url=${w.origin}/api/v1/write \\`,
              `  -remoteWrite.bearerToken=${token}`,
            ].join('\n'),
          },
        ],
      };
    case 'otel':
      return {
        id,
        label,
        needsToken: true,
        intro:
          'OTLP over HTTP (protobuf or JSON): the SDKs read these variables; the Collector takes an exporter.',
        blocks: [
          {
            title: 'OpenTelemetry SDK environment',
            text: [
              `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=${w.origin}/v1/metrics`,
              'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/protobuf',
              `OTEL_EXPORTER_OTLP_METRICS_HEADERS=Authorization=Bearer%20${token}`,
            ].join('\n'),
          },
          {
            title: 'OpenTelemetry Collector exporter (add it to the metrics pipeline)',
            text: [
              'exporters:',
              '  otlphttp/trifle:',
              `    metrics_endpoint: ${w.origin}/v1/metrics`,
              '    headers:',
              `      Authorization: Bearer ${token}`,
            ].join('\n'),
          },
        ],
      };
  }
}

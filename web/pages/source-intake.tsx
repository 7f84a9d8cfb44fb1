// A source's "Send data" section (docs/interface.md, docs/intake.md): ready-to-paste configuration
// for Proxmox VE, Home Assistant, Telegraf, collectd, vmagent/Prometheus and OpenTelemetry with the
// page's origin as the server and a write token created for it on the spot (a source token is shown
// once, so it goes straight into the snippet), the listeners bound to the source, and the dashboard
// templates its data allows (src/shared/dashboard-templates.ts).
import { useState } from 'preact/hooks';
import { api, get } from '../lib/api';
import { useLoad } from '../lib/hooks';
import {
  listenerLabel,
  senderConfig,
  SENDER_IDS,
  SENDER_LABELS,
  type IntakeListener,
  type Sender,
} from '../lib/intake-snippets';
import type { Source } from '../lib/types';
import { ErrorNotice } from '../components';
import { useRole } from './members';
import { IntakeTemplates } from './source-intake-templates';

function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState(false);
  const copy = () =>
    navigator.clipboard?.writeText(text).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  return (
    <button type="button" onClick={() => void copy()}>
      {copied ? 'Copied' : 'Copy'}
      <span class="visually-hidden"> {what}</span>
    </button>
  );
}

function Listeners({ listeners }: { listeners: IntakeListener[] | null }) {
  if (!listeners) return null;
  return (
    <div class="stack" style={{ gap: 'var(--space-2)' }}>
      <h3 style={{ margin: 0 }}>Listeners</h3>
      {listeners.length === 0 ? (
        <p class="muted" style={{ margin: 0 }}>
          No TCP or UDP listener is bound to this source. Senders without a token (collectd, Proxmox VE's
          Graphite or UDP modes, TrueNAS, StatsD) need one: <code>[[intake.listeners]]</code> in the service's
          configuration.
        </p>
      ) : (
        <ul class="list" aria-label="Listeners of this source" data-testid="intake-listeners">
          {listeners.map((l) => (
            <li key={`${l.protocol}-${l.transport}-${l.port}`}>
              <span class="name">
                {listenerLabel(l)} over {l.transport.toUpperCase()}
              </span>
              <span class="meta">
                port {l.port} · listening on {l.listen}
                {l.precision && ` · timestamps in ${l.precision}`}
                {l.flush_interval_ms !== null && ` · flushed every ${l.flush_interval_ms / 1000} s`}
                {l.key_prefix && ` · keys prefixed ${l.key_prefix}`}
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function SourceIntake({ source }: { source: Source }) {
  const admin = useRole('admin');
  const [senderId, setSenderId] = useState<Sender['id']>('telegraf');
  // tokens created here, by sender: their value is kept only in this page's memory
  const [tokens, setTokens] = useState<Partial<Record<Sender['id'], { name: string; value: string }>>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const listeners = useLoad(
    (signal) => get<IntakeListener[]>(`/bootstrap/sources/${source.id}/listeners`, { signal }),
    [source.id],
  );
  const created = tokens[senderId] ?? null;
  const sender = senderConfig(senderId, {
    origin: location.origin,
    sourceId: source.id,
    token: created?.value ?? null,
    listeners: listeners.data ?? [],
  });

  const createToken = async () => {
    setBusy(true);
    setError(null);
    try {
      const name = `${SENDER_LABELS[senderId]} on ${source.display_name}`.slice(0, 255);
      const made = await api<{ token: { value: string; name: string } }>('POST', '/bootstrap/source-tokens', {
        source_type: source.type,
        source_id: source.id,
        name,
        read: false,
        write: true,
      });
      setTokens((t) => ({ ...t, [senderId]: { name: made.token.name, value: made.token.value } }));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <details class="panel-body" data-testid="send-data" style={{ borderTop: '1px solid var(--border)' }}>
      <summary>
        <strong>Send data</strong>{' '}
        <span class="muted">
          from Proxmox VE, Home Assistant, Telegraf, collectd, Prometheus or OpenTelemetry
        </span>
      </summary>
      <div class="stack" style={{ marginTop: 'var(--space-3)' }}>
        <div class="presets" role="group" aria-label="Sender" style={{ flexWrap: 'wrap' }}>
          {SENDER_IDS.map((id) => (
            <button
              key={id}
              type="button"
              aria-pressed={id === senderId}
              onClick={() => (setSenderId(id), setError(null))}
            >
              {SENDER_LABELS[id]}
            </button>
          ))}
        </div>
        <section class="stack" aria-label={`${sender.label} configuration`} data-sender={sender.id}>
          <p style={{ margin: 0 }}>{sender.intro}</p>
          {sender.needsToken &&
            (created ? (
              <div class="notice" role="status">
                Token “{created.name}” (write only) is filled in below. Copy the configuration now: the token
                is not shown again.
              </div>
            ) : admin ? (
              <div class="row">
                <button type="button" class="primary" disabled={busy} onClick={() => void createToken()}>
                  Create a write token for this
                </button>
                <span class="muted">
                  named “{SENDER_LABELS[senderId]} on {source.display_name}”, write only; or paste one of
                  yours for {'<write token>'}.
                </span>
              </div>
            ) : (
              <p class="muted" style={{ margin: 0 }}>
                An admin of the organization can create a write token for this; put it in place of{' '}
                <code>{'<write token>'}</code>.
              </p>
            ))}
          <ErrorNotice message={error} />
          {sender.blocks.map((block, i) => (
            <div key={`${sender.id}-${i}`} class="stack" style={{ gap: 'var(--space-1)' }}>
              <div class="row">
                <strong style={{ flex: 1 }}>{block.title}</strong>
                <CopyButton text={block.text} what={block.title} />
              </div>
              <pre class="secret" data-testid={`snippet-${sender.id}-${i}`}>
                {block.text}
              </pre>
            </div>
          ))}
          {sender.id === 'collectd' &&
            listeners.data?.some((l) => l.protocol === 'graphite') === false &&
            listeners.data.some((l) => l.protocol === 'influx' && l.precision !== 'ms') && (
              <p class="muted" style={{ margin: 0 }}>
                The line protocol listener reads{' '}
                {listeners.data.find((l) => l.protocol === 'influx')?.precision} timestamps; collectd's
                write_influxdb_udp sends milliseconds, so it needs a listener with{' '}
                <code>precision = "ms"</code>.
              </p>
            )}
        </section>
        <ErrorNotice message={listeners.error} />
        <Listeners listeners={listeners.data} />
        <IntakeTemplates source={source} />
      </div>
    </details>
  );
}

// Sources: the organization's projects and databases; create a project or a database, set a
// database up, and mint and revoke source tokens (the value shown once, with a copy button and the
// exact curl lines to track and read with it).
import { useState } from 'preact/hooks';
import { api, get } from '../lib/api';
import { useLoad, useSession, useTitle } from '../lib/hooks';
import { loadSources } from '../lib/sources';
import type { Source, SourceToken } from '../lib/types';
import { SourceIntake } from './source-intake';
import { ConfirmButton, ErrorNotice, Skeleton } from '../components';
import { NewDatabaseForm, NewProjectForm } from './sources-forms';
import { Transponders } from './sources-transponders';
import { SourceSettings } from './source-settings';

/** A token's creation time in the reader's own words (the ISO instant stays in the title). */
const localDate = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

interface Minted {
  value: string;
  name: string;
  sourceId: string;
}

export function curlLines(origin: string, sourceId: string, token: string): string {
  const base = `${origin}/api/v1`;
  const auth = `-H "Authorization: Bearer ${token}" -H "X-Service-Source-Id: ${sourceId}"`;
  const at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [
    '# track a point',
    `curl -s -X POST ${base}/metrics ${auth} -H "Content-Type: application/json" \\`,
    `  -d '{"key":"requests","at":"${at}","values":{"count":1}}'`,
    '# read the last day by hour',
    `curl -s "${base}/metrics?key=requests&from=$(date -u -d '1 day ago' +%FT%TZ)&to=$(date -u +%FT%TZ)&granularity=1h" ${auth}`,
  ].join('\n');
}

function MintedToken({ minted, onClose }: { minted: Minted; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = () =>
    navigator.clipboard?.writeText(minted.value).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  return (
    <div class="notice stack" role="status" aria-label="New token">
      <strong>Token “{minted.name}” — copy it now, it is not shown again.</strong>
      <div class="row">
        <code class="secret" data-testid="token-value" style={{ flex: 1 }}>
          {minted.value}
        </code>
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <pre class="secret" data-testid="curl-lines">
        {curlLines(location.origin, minted.sourceId, minted.value)}
      </pre>
      <div>
        <button type="button" onClick={onClose}>
          Done
        </button>
      </div>
    </div>
  );
}

function Tokens({ source }: { source: Source }) {
  const tokens = useLoad(
    (signal) => get<SourceToken[]>(`/bootstrap/source-tokens?source_id=${source.id}`, { signal }),
    [source.id],
  );
  const [minted, setMinted] = useState<Minted | null>(null);
  const [error, setError] = useState<string | null>(null);
  const mint = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    try {
      const body = {
        source_type: source.type,
        source_id: source.id,
        name: String(form.get('name') || '') || undefined,
        read: form.get('read') === 'on',
        write: form.get('write') === 'on',
      };
      const created = await api<{ token: { value: string; name: string } }>(
        'POST',
        '/bootstrap/source-tokens',
        body,
      );
      setMinted({ value: created.token.value, name: created.token.name, sourceId: source.id });
      tokens.reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const revoke = (id: string) =>
    api('DELETE', `/bootstrap/source-tokens/${id}`).then(tokens.reload, (err: Error) =>
      setError(err.message),
    );
  return (
    <div class="panel-body stack">
      {minted && <MintedToken minted={minted} onClose={() => setMinted(null)} />}
      <ErrorNotice message={error ?? tokens.error} />
      <ul class="list" aria-label={`Tokens of ${source.display_name}`}>
        {tokens.data?.map((t) => (
          <li key={t.id} data-token={t.name}>
            <span class="name">{t.name}</span>
            <span class="meta">
              …{t.last5} ·{' '}
              {[t.read && 'read', t.write && 'write'].filter(Boolean).join(' + ') || 'no permission'} ·{' '}
              <time dateTime={t.inserted_at} title={t.inserted_at}>
                {localDate(t.inserted_at)}
              </time>
            </span>
            <span class="actions">
              <ConfirmButton
                label="Revoke"
                confirm={`Revoke ${t.name}`}
                onConfirm={() => void revoke(t.id)}
              />
            </span>
          </li>
        ))}
        {tokens.data?.length === 0 && <li class="muted">No tokens yet.</li>}
      </ul>
      <form class="row" onSubmit={mint} aria-label={`New token for ${source.display_name}`}>
        <label>
          <span class="visually-hidden">Token name</span>
          <input name="name" placeholder="Token name" maxLength={255} />
        </label>
        <label>
          <input type="checkbox" name="read" defaultChecked /> read
        </label>
        <label>
          <input type="checkbox" name="write" defaultChecked /> write
        </label>
        <button type="submit" class="primary">
          Mint token
        </button>
      </form>
    </div>
  );
}

function SourcePanel({ source, onChanged }: { source: Source; onChanged: () => void }) {
  const [message, setMessage] = useState<string | null>(null);
  const setup = () =>
    api<{ setup: { message?: string; status: string } }>(
      'POST',
      `/bootstrap/databases/${source.id}/setup`,
    ).then(
      (r) => {
        setMessage(r.setup.message ?? r.setup.status);
        onChanged();
      },
      (err: Error) => setMessage(err.message),
    );
  return (
    <section class="panel" data-source={source.display_name}>
      <header>
        <h2>{source.display_name}</h2>
        <span class="badge">{source.type === 'project' ? 'project' : source.driver}</span>
        {source.type === 'database' && <span class="badge">{source.setup_status ?? 'pending'}</span>}
        {source.type === 'database' && (
          <button type="button" onClick={() => void setup()}>
            Set up
          </button>
        )}
      </header>
      <div class="panel-body muted">
        <code>{source.id}</code> · {source.time_zone} · granularities {source.granularities.join(', ')} ·
        default {source.default_timeframe} by {source.default_granularity}
        {message && <div role="status">{message}</div>}
      </div>
      <SourceSettings source={source} onChanged={onChanged} />
      <SourceIntake source={source} />
      <Tokens source={source} />
      <Transponders source={source} />
    </section>
  );
}

export function SourcesPage() {
  useTitle('Sources');
  const { account } = useSession();
  const sources = useLoad((signal) => loadSources(signal), []);
  return (
    <main>
      <div class="page-head">
        <h1>Sources</h1>
      </div>
      {!account.organization && <div class="notice">Create an organization on the Account page first.</div>}
      <ErrorNotice message={sources.error} />
      {!sources.data && sources.loading && <Skeleton lines={3} />}
      <div class="stack">
        {sources.data?.map((s) => (
          <SourcePanel key={s.id} source={s} onChanged={sources.reload} />
        ))}
        {sources.data?.length === 0 && (
          <div class="notice">
            No sources yet. A project stores metrics in this service; a database source reads a Trifle::Stats
            store of yours.
          </div>
        )}
        {account.organization && (
          <div class="row" style={{ alignItems: 'flex-start' }}>
            <NewProjectForm onCreated={sources.reload} />
            <NewDatabaseForm onCreated={sources.reload} />
          </div>
        )}
      </div>
    </main>
  );
}

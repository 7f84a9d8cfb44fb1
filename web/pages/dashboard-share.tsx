// A dashboard's read-only share links: create one (its URL shown once, with a copy button; add
// ?kiosk for a wall display), list them by their last characters, revoke them.
import { useState } from 'preact/hooks';
import { api, get } from '../lib/api';
import { useLoad } from '../lib/hooks';
import { rangeParams } from '../lib/view';
import { ConfirmButton, ErrorNotice } from '../components';

interface Share {
  id: string;
  last5: string;
  inserted_at: string;
}

export function SharePanel({ dashboardId }: { dashboardId: string }) {
  const shares = useLoad(
    (signal) => get<Share[]>(`/dashboards/${dashboardId}/shares`, { signal }),
    [dashboardId],
  );
  const [created, setCreated] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const create = () =>
    api<{ path: string }>('POST', `/dashboards/${dashboardId}/shares`).then(
      (share) => {
        // The link opens on the range and segments on screen (a preset stays relative to now).
        const view = new URLSearchParams(rangeParams(location.search));
        for (const [name, value] of new URLSearchParams(location.search))
          if (name.startsWith('s.')) view.set(name, value);
        const rest = view.toString();
        setCreated(`${location.origin}${share.path}?kiosk${rest ? `&${rest}` : ''}`);
        setCopied(false);
        shares.reload();
      },
      (err: Error) => setError(err.message),
    );
  const revoke = (id: string) =>
    api('DELETE', `/dashboards/${dashboardId}/shares/${id}`).then(shares.reload, (err: Error) =>
      setError(err.message),
    );
  const copy = () =>
    created &&
    navigator.clipboard?.writeText(created).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  return (
    <section class="panel" aria-label="Share links" style={{ marginBottom: 'var(--space-3)' }}>
      <header>
        <h2>Read-only links</h2>
        <button type="button" class="primary" onClick={() => void create()}>
          Create link
        </button>
      </header>
      <div class="panel-body stack">
        <p class="muted">
          Anyone with a link sees this dashboard without signing in and can change nothing. Revoke a link to
          close it.
        </p>
        <ErrorNotice message={error ?? shares.error} />
        {created && (
          <div class="row">
            <code class="secret" data-testid="share-url" style={{ flex: 1 }}>
              {created}
            </code>
            <button type="button" onClick={() => void copy()}>
              {copied ? 'Copied' : 'Copy'}
            </button>
          </div>
        )}
        <ul class="list">
          {shares.data?.map((s) => (
            <li key={s.id} data-share={s.last5}>
              <span class="name">Link …{s.last5}</span>
              <span class="meta">{s.inserted_at}</span>
              <span class="actions">
                <ConfirmButton
                  label="Revoke"
                  confirm={`Revoke link …${s.last5}`}
                  onConfirm={() => void revoke(s.id)}
                />
              </span>
            </li>
          ))}
          {shares.data?.length === 0 && <li class="muted">No links yet.</li>}
        </ul>
      </div>
    </section>
  );
}

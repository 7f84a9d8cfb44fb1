// The Account page's Members panel (docs/members.md): everyone sees who belongs to the organization
// and with which role; admins change roles, remove members, and make invitation links that expire.
import { useContext, useState } from 'preact/hooks';
import { api, get } from '../lib/api';
import { SessionContext, useLoad, useSession } from '../lib/hooks';
import { ConfirmButton, ErrorNotice, Skeleton } from '../components';

interface Member {
  id: string;
  role: string;
  user: { id: string; email: string; name: string | null };
  joined_at: string;
  you: boolean;
}
interface Invitation {
  id: string;
  role: string;
  last5: string;
  created_at: string;
  expires_at: string;
  token?: string;
  path?: string;
}

const RANK: Record<string, number> = { owner: 4, admin: 3, editor: 2, viewer: 1 };
/** The role of the signed-in member is at least `minimum` (the interface hides what the API would refuse). */
export function useRole(minimum: 'admin' | 'editor'): boolean {
  const role = useContext(SessionContext)?.account.membership?.role;
  return role !== undefined && (RANK[role] ?? 0) >= RANK[minimum]!;
}

const EXPIRIES: [number, string][] = [
  [86_400, '1 day'],
  [7 * 86_400, '7 days'],
  [30 * 86_400, '30 days'],
];
const date = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function MembersPanel() {
  const { account } = useSession();
  const myRole = account.membership?.role ?? '';
  const manager = (RANK[myRole] ?? 0) >= RANK.admin!;
  const members = useLoad((signal) => get<Member[]>('/organization/members', { signal }), []);
  const invitations = useLoad(
    (signal) => (manager ? get<Invitation[]>('/organization/invitations', { signal }) : Promise.resolve([])),
    [manager],
  );
  const [error, setError] = useState<string | null>(null);
  const [link, setLink] = useState<{ url: string; role: string } | null>(null);
  const [copied, setCopied] = useState(false);

  const run = async (action: () => Promise<unknown>) => {
    try {
      await action();
      setError(null);
      members.reload();
      invitations.reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const canChange = (m: Member) =>
    manager && !m.you && m.role !== 'owner' && (m.role !== 'admin' || myRole === 'owner');
  const grantable = myRole === 'owner' ? ['admin', 'editor', 'viewer'] : ['editor', 'viewer'];

  const invite = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    await run(async () => {
      const created = await api<Invitation>('POST', '/organization/invitations', {
        role: String(form.get('role')),
        expires_in: Number(form.get('expires_in')),
      });
      setCopied(false);
      setLink({ url: `${location.origin}${created.path}`, role: created.role });
    });
  };

  return (
    <section class="panel" aria-labelledby="members-title">
      <header>
        <h2 id="members-title">Members</h2>
      </header>
      <div class="panel-body stack">
        <p class="muted">
          Owner and admins manage members. Editors build dashboards and monitors; viewers read only.
        </p>
        <ErrorNotice message={members.error ?? invitations.error ?? error} />
        {members.loading && !members.data ? (
          <Skeleton lines={2} />
        ) : (
          <ul class="list" aria-label="Members">
            {(members.data ?? []).map((m) => (
              <li key={m.id} data-testid="member">
                <span class="stack" style={{ gap: '2px', minWidth: 0 }}>
                  <span class="name truncate">
                    {m.user.name ?? m.user.email} {m.you && <span class="badge">you</span>}
                  </span>
                  <span class="meta truncate">
                    {m.user.name ? `${m.user.email} · ` : ''}joined {date(m.joined_at)}
                  </span>
                </span>
                <span class="actions">
                  {canChange(m) ? (
                    <>
                      <label>
                        <span class="visually-hidden">Role of {m.user.email}</span>
                        <select
                          value={m.role}
                          onChange={(e) =>
                            void run(() =>
                              api('PATCH', `/organization/members/${m.id}`, {
                                role: (e.target as HTMLSelectElement).value,
                              }),
                            )
                          }
                        >
                          {grantable.map((r) => (
                            <option key={r} value={r}>
                              {r}
                            </option>
                          ))}
                        </select>
                      </label>
                      <ConfirmButton
                        label="Remove"
                        confirm={`Remove ${m.user.email}`}
                        onConfirm={() => void run(() => api('DELETE', `/organization/members/${m.id}`))}
                      />
                    </>
                  ) : (
                    <span class="badge">{m.role}</span>
                  )}
                </span>
              </li>
            ))}
          </ul>
        )}
        {manager && (
          <>
            <h3>Invite someone</h3>
            <form class="row" onSubmit={(e) => void invite(e)}>
              <label class="field">
                Role
                <select name="role">
                  {grantable.map((r) => (
                    <option key={r} value={r} selected={r === 'viewer'}>
                      {r}
                    </option>
                  ))}
                </select>
              </label>
              <label class="field">
                Link works for
                <select name="expires_in">
                  {EXPIRIES.map(([s, label]) => (
                    <option key={s} value={String(s)} selected={s === 7 * 86_400}>
                      {label}
                    </option>
                  ))}
                </select>
              </label>
              <button class="primary" type="submit">
                Make invitation link
              </button>
            </form>
            {link && (
              <div class="notice" role="status">
                <p>
                  Send this link to the person you invite as {link.role}. It is shown once and works once.
                </p>
                <div class="row">
                  <input
                    readOnly
                    aria-label="Invitation link"
                    value={link.url}
                    data-testid="invitation-link"
                    onFocus={(e) => (e.target as HTMLInputElement).select()}
                    style={{ flex: 1, minWidth: 0 }}
                  />
                  <button
                    type="button"
                    onClick={() => navigator.clipboard?.writeText(link.url).then(() => setCopied(true))}
                  >
                    {copied ? 'Copied' : 'Copy'}
                  </button>
                </div>
              </div>
            )}
            {(invitations.data ?? []).length > 0 && (
              <ul class="list" aria-label="Pending invitations">
                {(invitations.data ?? []).map((i) => (
                  <li key={i.id} data-testid="invitation">
                    <span class="stack" style={{ gap: '2px' }}>
                      <span>
                        Link …{i.last5} <span class="badge">{i.role}</span>
                      </span>
                      <span class="meta">
                        made {date(i.created_at)} · expires {date(i.expires_at)}
                      </span>
                    </span>
                    <span class="actions">
                      <ConfirmButton
                        label="Revoke"
                        confirm="Revoke link"
                        onConfirm={() => void run(() => api('DELETE', `/organization/invitations/${i.id}`))}
                      />
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </div>
    </section>
  );
}

// The interface's only way to the server: the public /api/v1, authenticated by the session cookie
// (HttpOnly, so no token ever sits in script memory or a URL). Writes carry X-Service-CSRF, which
// the server requires on cookie-authenticated writes.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(describeError(status, body));
  }
  /** 422 field errors by field name (`payload.grid[w1].path` -> messages), or {} */
  get fields(): Record<string, string[]> {
    const errors = (this.body as { errors?: Record<string, unknown> } | null)?.errors;
    if (this.status !== 422 || !errors || 'detail' in errors) return {};
    const out: Record<string, string[]> = {};
    for (const [field, messages] of Object.entries(errors)) {
      if (Array.isArray(messages)) out[field] = messages.map(String);
    }
    return out;
  }
}

function describeError(status: number, body: unknown): string {
  const errors = (body as { errors?: Record<string, unknown> } | null)?.errors;
  if (errors && typeof errors.detail === 'string') return errors.detail;
  if (errors && typeof errors.error === 'string') return errors.error;
  if (errors) {
    return Object.entries(errors)
      .map(
        ([field, messages]) => `${field} ${Array.isArray(messages) ? messages.join(', ') : String(messages)}`,
      )
      .join('; ');
  }
  return status === 0 ? 'The server cannot be reached' : `Request failed (${status})`;
}

export const SESSION_EXPIRED = 'session-expired';

export interface RequestOptions {
  /** a bearer token (only the first-run signup's token, handed straight to POST /session) */
  token?: string;
  signal?: AbortSignal;
  /** a 401 is this request's own answer only (a prefetch made before sign-in is known) */
  silent?: boolean;
}

export async function api<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  options: RequestOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-service-csrf'] = '1';
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let res: Response;
  try {
    res = await fetch(`/api/v1${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      signal: options.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, null);
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  // A session revoked elsewhere (sign-out in another tab): the shell goes back to sign-in.
  if (res.status === 401 && path !== '/session' && !options.token && !options.silent)
    (globalThis as unknown as EventTarget).dispatchEvent(new Event(SESSION_EXPIRED));
  if (!res.ok) throw new ApiError(res.status, parsed);
  return (parsed as { data: T }).data;
}

export const get = <T>(path: string, options?: RequestOptions) => api<T>('GET', path, undefined, options);

/** Query string from a record, skipping empty values. */
export function qs(params: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [k, value] of Object.entries(params))
    if (value !== null && value !== undefined && value !== '') search.set(k, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

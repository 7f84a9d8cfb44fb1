// One error type for the whole service and the one table that maps it to HTTP.
// Handlers and domain code throw AppError; only toHttp() knows statuses and bodies.
// An AppError carries two things apart: what the client may read (its message, when `expose`) and
// why it happened (`cause`: the driver's or the system's error), which the error middleware logs
// with the request id and no answer ever contains.
import { STATUS_CODES } from 'node:http';

export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'validation'
  | 'query'
  | 'rate_limited'
  | 'unavailable'
  | 'header_too_large'
  | 'insufficient_storage'
  | 'internal';

const STATUS: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation: 422,
  query: 422,
  rate_limited: 429,
  unavailable: 503,
  header_too_large: 431,
  insufficient_storage: 507,
  internal: 500,
};

export interface AppErrorOptions {
  /** validation: field name -> messages */
  fields?: Record<string, string[]>;
  /** query: extra members of the error body (available_paths, allowed, ...) */
  extra?: Record<string, unknown>;
  /** 429/503: seconds for the Retry-After header */
  retryAfter?: number;
  /** HTTP headers to add (e.g. Allow on 405) */
  headers?: Record<string, string>;
  /** the underlying error, for the log only (never sent) */
  cause?: unknown;
  /**
   * Whether the client sees the message. Default: yes for 4xx, and for the 5xx whose message is
   * written for clients (503 retry later, 507); never for 500, whatever this says.
   */
  expose?: boolean;
}

/** The body detail of an error whose message is not exposed (else the status's reason phrase). */
const HIDDEN_DETAIL: Partial<Record<ErrorKind, string>> = {
  internal: 'Internal server error',
  unavailable: 'Service unavailable, retry later',
  insufficient_storage: 'Insufficient storage',
};

export class AppError extends Error {
  readonly kind: ErrorKind;
  /** the answer's parts (fields, extra, retryAfter, headers); cause and expose are kept apart */
  readonly options: Omit<AppErrorOptions, 'cause' | 'expose'>;
  /** whether the client sees the message (see AppErrorOptions.expose) */
  readonly expose: boolean;
  constructor(kind: ErrorKind, message: string, options: AppErrorOptions = {}) {
    const { cause, expose, ...answer } = options;
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AppError';
    this.kind = kind;
    this.options = answer;
    this.expose = kind !== 'internal' && (expose ?? true);
  }
  get status(): number {
    return STATUS[this.kind];
  }
}

export const badRequest = (detail: string) => new AppError('bad_request', detail);
export const unauthorized = (detail = 'Bad token') => new AppError('unauthorized', detail);
export const forbidden = (detail = 'Forbidden') => new AppError('forbidden', detail);
export const notFound = () => new AppError('not_found', 'Not found');
export const conflict = (detail: string) => new AppError('conflict', detail);
export const payloadTooLarge = (detail: string) => new AppError('payload_too_large', detail);
export const unsupportedMediaType = (detail: string) => new AppError('unsupported_media_type', detail);
export const invalid = (fields: Record<string, string[]>) =>
  new AppError('validation', 'Validation failed', { fields });
export const invalidField = (field: string, message: string) => invalid({ [field]: [message] });
export const queryError = (message: string, extra: Record<string, unknown> = {}) =>
  new AppError('query', message, { extra });
export const rateLimited = (detail: string, retryAfter: number) =>
  new AppError('rate_limited', detail, { retryAfter });
export const unavailable = (detail: string, retryAfter: number) =>
  new AppError('unavailable', detail, { retryAfter });

export interface HttpError {
  status: number;
  body: { errors: Record<string, unknown> };
  headers: Record<string, string>;
}

/**
 * A full disk, wherever it surfaced: SQLite's SQLITE_FULL (or an I/O error it reports as "disk
 * full") and the file system's ENOSPC/EDQUOT. Mapped here, not in the write paths, so every
 * write (metrics, accounts, dashboards, uploads) answers 507 alike.
 */
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return true;
  return (
    code.startsWith('SQLITE_IOERR') &&
    typeof e?.message === 'string' &&
    /disk is full|no space/i.test(e.message)
  );
}

/**
 * The service database's lock not had within its busy timeout (SQLITE_BUSY, SQLITE_LOCKED and
 * their extended codes): an overload, answered like a full write queue, not a fault of the server.
 */
export function isDatabaseBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** The one mapping from an error to an HTTP answer. Unknown errors become a bare 500. */
export function toHttp(err: unknown): HttpError {
  if (!(err instanceof AppError)) {
    if (isDiskFull(err))
      return { status: 507, body: { errors: { detail: 'Insufficient storage' } }, headers: {} };
    if (isDatabaseBusy(err)) {
      return {
        status: 503,
        body: { errors: { detail: 'The database is busy, retry later' } },
        headers: { 'Retry-After': '1' },
      };
    }
    return { status: 500, body: { errors: { detail: 'Internal server error' } }, headers: {} };
  }
  const headers: Record<string, string> = { ...(err.options.headers ?? {}) };
  if (err.options.retryAfter !== undefined) headers['Retry-After'] = String(err.options.retryAfter);
  let errors: Record<string, unknown>;
  if (!err.expose) errors = { detail: HIDDEN_DETAIL[err.kind] ?? STATUS_CODES[err.status] ?? 'Error' };
  else if (err.kind === 'validation') errors = { ...(err.options.fields ?? { detail: [err.message] }) };
  else if (err.kind === 'query')
    errors = { status: 'error', error: err.message, ...(err.options.extra ?? {}) };
  else errors = { detail: err.message };
  return { status: err.status, body: { errors }, headers };
}

// The outermost middleware: every thrown error becomes the SPEC body through errors.ts.
// An AppError's cause (the driver's or the system's error behind it) is logged with the request id
// and never sent; unexpected errors are logged likewise and answer a bare 500.
import type { Context, Next } from 'koa';
import { AppError, toHttp } from '../../errors';
import type { Logger } from '../../lib/log';
import { stateOf } from '../state';

/** An error as one log field: its code or name and message (the stack for a fault of ours). */
function describe(err: unknown, stack: boolean): string {
  if (!(err instanceof Error)) return String(err);
  if (stack && err.stack) return err.stack;
  return `${(err as { code?: unknown }).code ?? err.name}: ${err.message}`;
}

/** The first cause that is not itself one of our answers (a cluster's 503 wraps its driver's). */
function rootCause(err: AppError): unknown {
  let cause: unknown = err.cause;
  for (let i = 0; i < 5 && cause instanceof AppError && cause.cause !== undefined; i++) cause = cause.cause;
  return cause;
}

export function errorHandler(log: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (err) {
      const answer = toHttp(normalizeError(err));
      if (err instanceof AppError && err.cause !== undefined) {
        // e.g. a database source that failed: the client sees 503, the log keeps the driver's reason
        const fields = {
          request_id: stateOf(ctx).requestId,
          path: ctx.path,
          status: answer.status,
          error: describe(rootCause(err), false),
        };
        // which store (a database source, a metrics cluster, cluster mode's database) is in `detail`
        if (err.kind === 'unavailable') log.warn('store unavailable', { ...fields, detail: err.message });
        else log.warn('request refused', { ...fields, detail: err.message });
      }
      if (answer.status >= 500 && !(err instanceof AppError && err.kind === 'unavailable')) {
        log.error('request failed', {
          request_id: stateOf(ctx).requestId,
          method: ctx.method,
          path: ctx.path,
          error: describe(err, true),
        });
      }
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.body = answer.body;
    }
  };
}

/** Errors thrown by Koa/body readers carry status/expose: map the client ones into AppError. */
function normalizeError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = err as { status?: number; expose?: boolean; message?: string; type?: string };
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    if (e.status === 413) return new AppError('payload_too_large', 'Request body too large');
    if (e.status === 415)
      return new AppError('unsupported_media_type', e.message ?? 'Unsupported media type');
    if (e.status === 404) return new AppError('not_found', 'Not found');
    return new AppError('bad_request', e.expose && e.message ? e.message : 'Bad request');
  }
  return err;
}

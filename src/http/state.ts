// What the middleware leaves on ctx.state, as one type, and the accessors handlers read it
// through: a handler never casts ctx.state. An accessor whose middleware did not run (a route
// mounted without it) is a fault of ours: 500, logged.
import type { Context } from 'koa';
import type { Auth, Source, UserAuth } from '../domain/types';
import type { UploadedFile } from '../domain/sqlite-paths';
import type { Dashboard } from '../model/dashboard';
import { AppError } from '../errors';

export interface RequestState {
  /** request-log.ts: the id every log line of the request carries */
  requestId?: string;
  /** auth.ts: the token's identity */
  auth?: Auth;
  /** auth.ts (metrics routes): the token's source */
  source?: Source;
  /** routes/shares.ts: the dashboard and source of a share link */
  shared?: { dashboard: Dashboard; source: Source };
  /** body.ts: the parsed JSON body (or multipart fields), until validate() takes it */
  body?: unknown;
  /** body.ts: a JSON body kept as bytes (the batch endpoint) */
  rawBody?: Buffer;
  /** upload.ts: the files a multipart body staged, by field name */
  files?: Record<string, UploadedFile | UploadedFile[] | undefined>;
}

/** ctx.state as its type (Koa types it as any). */
export function stateOf(ctx: Context): RequestState {
  return ctx.state;
}

function missing(what: string): AppError {
  return new AppError('internal', `${what} is missing: the route lacks its middleware`);
}

/** The token's identity (requireUser, requireSource or requireOrganizationToken ran). */
export function authOf(ctx: Context): Auth {
  const { auth } = stateOf(ctx);
  if (!auth) throw missing('auth');
  return auth;
}

/** A user token's identity (requireUser ran). */
export function userAuthOf(ctx: Context): UserAuth {
  const auth = authOf(ctx);
  if (auth.kind !== 'user') throw missing('a user token');
  return auth;
}

/** The source a metrics request's token is bound to (requireSource ran). */
export function sourceOf(ctx: Context): Source {
  const { source } = stateOf(ctx);
  if (!source) throw missing('source');
  return source;
}

/** The share link's dashboard and source (the share routes' resolve ran). */
export function sharedOf(ctx: Context): { dashboard: Dashboard; source: Source } {
  const { shared } = stateOf(ctx);
  if (!shared) throw missing('shared');
  return shared;
}

/** Every file a multipart body staged, whatever its field name. */
export function stagedFiles(ctx: Context): UploadedFile[] {
  return Object.values(stateOf(ctx).files ?? {})
    .flat()
    .filter((file): file is UploadedFile => file !== undefined);
}

/** The file uploaded under `field`, if one was. */
export function uploadedFile(ctx: Context, field: string): UploadedFile | null {
  const file = stateOf(ctx).files?.[field];
  return (Array.isArray(file) ? file[0] : file) ?? null;
}

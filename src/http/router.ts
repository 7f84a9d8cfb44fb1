// The whole /api/v1 route table, one line per route, in one function. A route that reads a body or
// a query names its validator (middleware/validate.ts) after the body reader; the handler then reads
// the typed result through it.
import path from 'node:path';
import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { AppError, notFound } from '../errors';
import type { Deps } from '../deps';
import { jsonBody, jsonOrMultipartBody, rawJsonBody } from './middleware/body';
import { createBodyBudget } from './middleware/body-budget';
import { validate } from './middleware/validate';
import { requireMember, requireOrganizationToken, requireSource, requireUser } from './middleware/auth';
import { memberRoutes } from './routes/members';
import { healthRoutes } from './routes/health';
import { bootstrapRoutes } from './routes/bootstrap';
import { metricsInput, metricsRoutes } from './routes/metrics';
import { dashboardInput, dashboardRoutes } from './routes/dashboards';
import { dashboardGroupRoutes, groupInput } from './routes/dashboard-groups';
import { sessionRoutes } from './routes/session';
import { shareRoutes } from './routes/shares';
import { intakeListenerRoutes } from './routes/intake-listeners';
import { withIntake } from '../intake/routes';
import { requireAnySourceFlag, transponderRoutes, userSource } from './routes/transponders';
import { monitorInput, monitorRoutes } from './routes/monitors';
import { channelInput, channelRoutes } from './routes/channels';

type Handler = (ctx: Context, next: Next) => unknown;

/**
 * GET /session?optional=1 (docs/interface.md): without an Authorization header, no valid session is
 * 200 `{data:null}` instead of 401, so the signed-out landing page logs no failed request. Without
 * the parameter, or with a bearer token, it is the user check as everywhere.
 */
const sessionQuery = validate({ query: (query) => ({ optional: query.optional === '1' }) });
function optionalUser(user: Handler): Handler {
  return async (ctx, next) => {
    if (!sessionQuery.query(ctx).optional || ctx.get('authorization')) return user(ctx, next);
    let passed = false;
    try {
      await user(ctx, () => {
        passed = true;
        return next();
      });
    } catch (err) {
      if (passed || !(err instanceof AppError) || err.kind !== 'unauthorized') throw err;
      ctx.status = 200;
      ctx.body = { data: null };
    }
  };
}

/** Runs handlers in order, each one's `next` calling the one after it (a fixed koa-compose). */
function chain(handlers: readonly Handler[]): Handler {
  return handlers.reduceRight<Handler>(
    (downstream, handler) => (ctx, next) => handler(ctx, () => downstream(ctx, next) as Promise<void>),
    (ctx, next) => next(),
  );
}

/**
 * The ingest endpoints are the hot path: a request with exactly their method and path runs their
 * chain directly, skipping the router's per-request work (testing every route, composing the
 * matched chain), about 7% of a single-point ingest. Every other request, other spellings of
 * these paths included, goes through the router, which routes these paths to the same chains.
 */
function withHotRoutes(router: Router, hot: Record<string, readonly Handler[]>): Middleware {
  const routes = router.routes() as unknown as Handler; // its context type adds the router's fields
  const chains = new Map(Object.entries(hot).map(([route, handlers]) => [route, chain(handlers)]));
  return function route(ctx, next) {
    const hotChain = chains.get(`${ctx.method} ${ctx.path}`);
    return (hotChain ?? routes)(ctx, next) as Promise<void>;
  };
}

/** The /api/v1 routes as one middleware. */
export function createRoutes(deps: Deps): Middleware {
  const { limits } = deps.config;
  const budget = createBodyBudget(deps.config.server.bodyBytesInFlight); // one per server, shared by every body reader
  const json = jsonBody(limits.maxBodyBytes, budget);
  const rawJson = rawJsonBody(limits.maxBodyBytes, budget);
  const upload = jsonOrMultipartBody(
    limits.maxBodyBytes,
    limits.sqliteUploadMaxBytes,
    path.join(deps.config.sources.sqliteRoot, '.uploads'),
    budget,
  );
  const user = requireUser(deps);
  const reader = requireSource(deps, 'read');
  const writer = requireSource(deps, 'write');
  const dashReader = requireOrganizationToken(deps, 'read');
  const dashWriter = requireOrganizationToken(deps, 'write');
  // Roles (src/domain/members.ts): editors change dashboards, share links, monitors and channels;
  // admins also sources, source tokens and members.
  const editor = requireMember(deps, 'editor');
  const admin = requireMember(deps, 'admin');

  const health = healthRoutes(deps);
  const boot = bootstrapRoutes(deps);
  const metrics = metricsRoutes(deps);
  const dash = dashboardRoutes(deps);
  const groups = dashboardGroupRoutes(deps);
  const session = sessionRoutes(deps);
  const shares = shareRoutes(deps);

  const r = new Router({ prefix: '/api/v1' });
  r.get('/health', health.show);

  r.post('/bootstrap/signup', json, boot.input.signup, boot.signup);
  r.post('/bootstrap/login', json, boot.input.login, boot.login);
  r.get('/bootstrap/me', user, boot.me);
  r.post('/bootstrap/organizations', user, json, boot.input.organization, boot.createOrganization);
  r.get('/bootstrap/sources', user, boot.listSources);
  r.post('/bootstrap/databases', admin, upload, boot.input.database, boot.createDatabase);
  r.post('/bootstrap/databases/:id/setup', admin, json, boot.input.setup, boot.setupDatabase);
  r.post('/bootstrap/projects', admin, json, boot.input.project, boot.createProject);
  r.put('/bootstrap/projects/:id', admin, json, boot.input.projectUpdate, boot.updateProject);
  r.patch('/bootstrap/projects/:id', admin, json, boot.input.projectUpdate, boot.updateProject);
  r.post('/bootstrap/source-tokens', admin, json, boot.input.sourceToken, boot.createSourceToken);
  // Editing and removing sources from the web interface (docs/bootstrap.md#editing-and-removing-sources).
  r.delete('/bootstrap/projects/:id', admin, boot.removeProject);
  r.patch('/bootstrap/databases/:id', admin, json, boot.input.databaseUpdate, boot.updateDatabase);
  r.delete('/bootstrap/databases/:id', admin, boot.removeDatabase);
  r.get('/bootstrap/sources/:id/dependents', user, boot.dependents);

  // The web interface's extensions (docs/interface.md).
  r.get('/bootstrap/setup-state', session.setupState);
  r.get('/bootstrap/source-tokens', user, session.input.sourceTokens, session.listSourceTokens);
  r.delete('/bootstrap/source-tokens/:id', admin, session.revokeSourceToken);
  r.get('/session', sessionQuery, optionalUser(user), session.show);
  r.post('/session', json, session.input.create, session.create);
  r.delete('/session', user, session.remove);
  r.get('/session/sessions', user, session.listSessions);
  r.delete('/session/sessions/:id', user, session.revokeSession);
  r.get('/sources/:id/metrics', user, session.input.sourceSeries, session.sourceSeries);
  r.get('/bootstrap/sources/:id/listeners', user, intakeListenerRoutes(deps).list);
  r.get('/dashboards/:id/shares', user, shares.list);
  r.post('/dashboards/:id/shares', editor, shares.create);
  r.delete('/dashboards/:id/shares/:shareId', editor, shares.remove);
  r.get('/shared/:token', shares.show);
  r.get('/shared/:token/metrics', shares.resolve, shares.input.series, shares.series);

  // Members and invitations (docs/members.md); the domain checks who may change whom.
  const members = memberRoutes(deps);
  r.get('/organization/members', user, members.list);
  r.patch('/organization/members/:id', admin, json, members.input.role, members.update);
  r.delete('/organization/members/:id', admin, members.remove);
  r.get('/organization/invitations', admin, members.invitations);
  r.post('/organization/invitations', admin, json, members.input.invitation, members.invite);
  r.delete('/organization/invitations/:id', admin, members.revoke);
  r.post('/invitations/preview', json, members.input.token, members.preview);
  r.post('/invitations/accept', user, json, members.input.token, members.accept);

  r.get('/metrics', reader, metricsInput.series, metrics.series);
  const ingest = [writer, json, metrics.ingestEnabled, metricsInput.ingest, metrics.ingest] as const;
  const ingestBatch = [writer, rawJson, metrics.ingestBatch] as const;
  r.post('/metrics', ...ingest);
  r.post('/metrics/batch', ...ingestBatch);
  r.post('/metrics/query', reader, json, metricsInput.query, metrics.query);

  // Transponders and the source endpoint (SPEC 15): source tokens, as the metrics routes.
  const transponders = transponderRoutes(deps);
  r.get('/source', requireAnySourceFlag(deps), transponders.source);
  r.get('/transponders', reader, transponders.list);
  r.post('/transponders', writer, json, transponders.input.create, transponders.create);
  r.get('/transponders/:id', reader, transponders.show);
  r.put('/transponders/:id', writer, json, transponders.input.update, transponders.update);
  r.patch('/transponders/:id', writer, json, transponders.input.update, transponders.update);
  r.delete('/transponders/:id', writer, transponders.remove);
  // The same for the web interface: a signed-in user, a source of the user's organization; changing
  // a source's transponders is an admin's, as changing the source is (docs/members.md).
  const own = [user, userSource(deps)] as const;
  const ownAdmin = [admin, userSource(deps)] as const;
  r.get('/sources/:sourceId/transponders', ...own, transponders.list);
  r.post(
    '/sources/:sourceId/transponders',
    ...ownAdmin,
    json,
    transponders.input.create,
    transponders.create,
  );
  r.get('/sources/:sourceId/transponders/:id', ...own, transponders.show);
  r.put(
    '/sources/:sourceId/transponders/:id',
    ...ownAdmin,
    json,
    transponders.input.update,
    transponders.update,
  );
  r.delete('/sources/:sourceId/transponders/:id', ...ownAdmin, transponders.remove);

  r.get('/dashboards', dashReader, dashboardInput.page, dash.list);
  r.post('/dashboards', dashWriter, json, dashboardInput.fields, dash.create);
  r.get('/dashboards/:id', dashReader, dash.show);
  r.put('/dashboards/:id', dashWriter, json, dashboardInput.fields, dash.update);
  r.patch('/dashboards/:id', dashWriter, json, dashboardInput.fields, dash.update);
  r.delete('/dashboards/:id', dashWriter, dash.remove);

  r.get('/dashboard-groups', dashReader, groupInput.page, groups.list);
  r.post('/dashboard-groups', dashWriter, json, groupInput.fields, groups.create);
  r.get('/dashboard-groups/:id', dashReader, groups.show);
  r.put('/dashboard-groups/:id', dashWriter, json, groupInput.fields, groups.update);
  r.patch('/dashboard-groups/:id', dashWriter, json, groupInput.fields, groups.update);
  r.delete('/dashboard-groups/:id', dashWriter, groups.remove);

  // Alert monitors (SPEC 13): the tokens and locking of dashboards.
  const monitors = monitorRoutes(deps);
  r.get('/monitors', dashReader, monitorInput.page, monitors.list);
  r.post('/monitors', dashWriter, json, monitorInput.fields, monitors.create);
  r.post('/monitors/preview', dashReader, json, monitorInput.preview, monitors.preview);
  r.get('/monitors/:id', dashReader, monitors.show);
  r.put('/monitors/:id', dashWriter, json, monitorInput.fields, monitors.update);
  r.patch('/monitors/:id', dashWriter, json, monitorInput.fields, monitors.update);
  r.delete('/monitors/:id', dashWriter, monitors.remove);
  r.get('/monitors/:id/history', dashReader, monitorInput.history, monitors.history);
  r.post('/monitors/:id/mute', dashWriter, json, monitorInput.mute, monitors.mute);
  r.delete('/monitors/:id/mute', dashWriter, monitors.unmute);
  // Alert channels (SPEC 13, docs/alerts-channels.md): the dashboards' token rules.
  const channels = channelRoutes(deps);
  r.get('/channels', dashReader, channels.list);
  r.post('/channels', dashWriter, json, channelInput.fields, channels.create);
  r.get('/channels/:id', dashReader, channels.show);
  r.put('/channels/:id', dashWriter, json, channelInput.fields, channels.update);
  r.patch('/channels/:id', dashWriter, json, channelInput.fields, channels.update);
  r.delete('/channels/:id', dashWriter, channels.remove);
  r.post('/channels/:id/test', dashWriter, channels.test);
  return withIntake(
    withHotRoutes(r, { 'POST /api/v1/metrics': ingest, 'POST /api/v1/metrics/batch': ingestBatch }),
    deps,
    budget,
  );
}

/**
 * Runs after the routes: a path that matched some route but not this method is 405 (with Allow;
 * OPTIONS answers 204 with Allow), anything else is 404.
 */
export async function unmatchedRoute(ctx: Context): Promise<void> {
  const layers = (ctx.matched ?? []) as Array<{ methods: string[] }>;
  const allowed = [...new Set(layers.flatMap((layer) => layer.methods))];
  if (allowed.length === 0) throw notFound();
  if (ctx.method === 'OPTIONS') {
    ctx.set('Allow', allowed.join(', '));
    ctx.status = 204;
    return;
  }
  throw new AppError('method_not_allowed', 'Method not allowed', { headers: { Allow: allowed.join(', ') } });
}

// /api/v1/monitors (SPEC 13): list, show, create, update, remove as dashboards (same tokens, locking,
// versions), plus preview, history and mute. Order of answers on a change: auth -> 400 (body not an
// object) -> 404 -> 409 (locked, stale) -> 422.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import {
  type MonitorInput,
  type MonitorsContext,
  buildMonitor,
  createMonitor,
  findChangeable,
  findMonitor,
  listMonitors,
  muteMonitor,
  removeMonitor,
  updateMonitor,
  SAVE_TRIES,
  CHANGED_MEANWHILE,
} from '../../domain/alerts/monitors';
import { previewMonitor } from '../../domain/alerts/preview';
import { ErrorBag } from '../../domain/dashboards/issues';
import { etagOf } from '../../domain/dashboards/versions';
import { conflict, invalidField } from '../../errors';
import type { Monitor } from '../../model/monitor';
import { objectBody } from '../middleware/body';
import { validate } from '../middleware/validate';
import { parsePage, unwrap } from '../schemas/dashboards';
import { parseHistoryQuery, parseMonitorFields, parseMute, parsePreviewRange } from '../schemas/monitors';
import { authOf } from '../state';
import { presentHistory, presentMonitor } from '../present/monitors';
import { expectedVersion } from './dashboards';

export function monitorsContext(deps: Deps): MonitorsContext {
  return {
    channels: deps.channels,
    dashboards: deps.dashboards,
    monitors: deps.monitors,
    sources: deps.sources,
    projectsEnabled: deps.config.features.projectsEnabled,
    now: () => deps.now(),
    nameOf: async (userId) => {
      const user = await deps.accounts.userById(userId);
      return user ? user.name || user.email : undefined;
    },
  };
}

function parseBody(body: unknown) {
  const fields = unwrap(objectBody(body), 'monitor');
  const bag = new ErrorBag();
  const input = parseMonitorFields(fields, bag) as MonitorInput;
  return { input, bag, unlocking: fields.locked === false, fields };
}

export const monitorInput = {
  page: validate({ query: parsePage }),
  fields: validate({ body: parseBody }),
  preview: validate({
    body: (body: unknown) => {
      const parsed = parseBody(body);
      const raw = objectBody(body);
      return { ...parsed, range: parsePreviewRange(raw, parsed.bag) };
    },
  }),
  history: validate({ query: parseHistoryQuery }),
  mute: validate({
    body: (body: unknown) => {
      const bag = new ErrorBag();
      const { until } = parseMute(objectBody(body), bag);
      return { until, bag };
    },
  }),
};

const idOf = (ctx: Context): string => String(ctx.params.id ?? '');

export function monitorRoutes(deps: Deps) {
  const domain = monitorsContext(deps);
  const present = async (m: Monitor) => presentMonitor(m, await deps.monitors.instances(m.id), deps.now());
  return {
    async list(ctx: Context): Promise<void> {
      const { limit, offset } = monitorInput.page.query(ctx);
      const page = await listMonitors(domain, authOf(ctx), limit, offset);
      ctx.body = {
        data: await Promise.all(page.monitors.map(present)),
        meta: { total: page.total, limit, offset },
      };
    },

    async show(ctx: Context): Promise<void> {
      const monitor = await findMonitor(domain, authOf(ctx), idOf(ctx));
      ctx.set('ETag', etagOf(monitor));
      ctx.body = { data: await present(monitor) };
    },

    async create(ctx: Context): Promise<void> {
      const { input, bag } = monitorInput.fields.body(ctx);
      const monitor = await createMonitor(domain, authOf(ctx), input, bag);
      ctx.status = 201;
      ctx.set('ETag', etagOf(monitor));
      ctx.body = { data: await present(monitor) };
    },

    async update(ctx: Context): Promise<void> {
      const { input, bag, unlocking, fields } = monitorInput.fields.body(ctx);
      const auth = authOf(ctx);
      const expected = expectedVersion(ctx, fields, bag);
      const userId = auth.kind === 'user' ? auth.userId : null;
      // Written at the version the checks read; when another save came in between, checked again.
      for (let attempt = 1; ; attempt++) {
        const current = await findChangeable(domain, auth, idOf(ctx), unlocking, expected);
        const updated = await updateMonitor(domain, current, input, bag, userId, expected);
        if (updated) {
          ctx.set('ETag', etagOf(updated));
          ctx.body = { data: await present(updated) };
          return;
        }
        if (attempt === SAVE_TRIES) throw conflict(CHANGED_MEANWHILE);
      }
    },

    async remove(ctx: Context): Promise<void> {
      for (let attempt = 1; ; attempt++) {
        const current = await findChangeable(domain, authOf(ctx), idOf(ctx), false);
        const shown = await present(current);
        if (await removeMonitor(domain, current)) {
          ctx.body = { data: shown };
          return;
        }
        if (attempt === SAVE_TRIES) throw conflict(CHANGED_MEANWHILE);
      }
    },

    async preview(ctx: Context): Promise<void> {
      const { input, bag, range } = monitorInput.preview.body(ctx);
      const { monitor, source, plan } = await buildMonitor(domain, authOf(ctx), input, bag);
      if (monitor.type !== 'alert' && !bag.has('type'))
        bag.add('type', 'only alert monitors can be previewed');
      if (range.from !== undefined && range.to !== undefined && range.from >= range.to)
        bag.add('from', 'must be before to');
      bag.throwIfAny();
      const answer = await previewMonitor(deps.metrics, monitor, source, plan!, deps.now(), range);
      ctx.body = { data: answer };
    },

    async history(ctx: Context): Promise<void> {
      const { limit } = monitorInput.history.query(ctx);
      const monitor = await findMonitor(domain, authOf(ctx), idOf(ctx));
      ctx.body = { data: (await deps.monitors.history(monitor.id, limit)).map(presentHistory) };
    },

    async mute(ctx: Context): Promise<void> {
      const { until, bag } = monitorInput.mute.body(ctx);
      await findMonitor(domain, authOf(ctx), idOf(ctx)); // 404 before 422
      bag.throwIfAny();
      if (until === undefined) throw invalidField('until', 'is required');
      ctx.body = { data: await present(await muteMonitor(domain, authOf(ctx), idOf(ctx), until)) };
    },

    async unmute(ctx: Context): Promise<void> {
      ctx.body = { data: await present(await muteMonitor(domain, authOf(ctx), idOf(ctx), null)) };
    },
  };
}

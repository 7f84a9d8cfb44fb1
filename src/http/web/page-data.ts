// The data a dashboard's page (/d/<id>) carries for its inline script (web/boot.ts, through
// web/lib/prefetch.ts): the dashboard and its source, exactly as GET /dashboards/<id> and
// GET /bootstrap/sources present them to the same session, so that the first series read leaves
// as the HTML is parsed instead of after two more round trips (SPEC 10). Only for a browser's
// session cookie (no Authorization header: a page is never asked for with one), and only what that
// session may read; otherwise nothing, and the page reads them itself as before. No token, no
// source configuration: the presenters leave them out.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import { showDashboard } from '../../domain/dashboards/dashboards';
import { listSources } from '../../domain/sources';
import { AppError } from '../../errors';
import { authenticate, SESSION_COOKIE } from '../middleware/auth';
import { presentDashboard } from '../present/dashboards';
import { presentSource } from '../present/sources';
import { dashboardsContext } from '../routes/dashboards';
import type { PageDataReader } from './serve';

export function dashboardPageData(deps: Deps): PageDataReader {
  const domain = dashboardsContext(deps);
  return async (ctx: Context, id: string) => {
    if (ctx.get('authorization') !== '' || !ctx.cookies.get(SESSION_COOKIE)) return null;
    try {
      const auth = await authenticate(ctx, deps);
      if (auth.kind !== 'user') return null;
      const dashboard = await showDashboard(domain, auth, id);
      const { projects, databases } = await listSources(deps, auth);
      const source = [...projects, ...databases].find((s) => s.id === dashboard.sourceId);
      if (!source) return null;
      return { dashboard: { id, data: presentDashboard(dashboard), source: presentSource(source) } };
    } catch (err) {
      if (err instanceof AppError) return null; // signed out, not found: the page reads and says so
      throw err;
    }
  };
}

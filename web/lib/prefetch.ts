// Reads a page is certain to need, started when the script runs rather than after sign-in is checked
// and the page has rendered: on /d/:id the dashboard and the sources, so that the first metrics read
// leaves one round trip after navigation instead of three (SPEC 10). A prefetched read is taken once;
// a failed one (signed out, gone) is dropped and the page reads again in its own way.
import { get } from './api';
import { loadSources } from './sources';
import type { Dashboard, Source } from './types';

interface DashboardPrefetch {
  id: string;
  data: Promise<[Dashboard, Source[]]>;
}

let pending: DashboardPrefetch | null = null;

export function prefetchForLocation(path: string): void {
  const m = /^\/d\/([^/]+)$/.exec(path);
  if (!m) return;
  let id: string;
  try {
    id = decodeURIComponent(m[1]!); // as web/app.tsx hands it to the page
  } catch {
    return; // a malformed address: the page says so itself
  }
  const data = Promise.all([
    get<Dashboard>(`/dashboards/${id}`, { silent: true }),
    loadSources(undefined, true),
  ]);
  data.catch(() => undefined); // an unused failure is not an unhandled rejection
  pending = { id, data };
}

/** The prefetched dashboard and sources for `id`, once; null when none was started for it. */
export function takeDashboardPrefetch(id: string): Promise<[Dashboard, Source[]]> | null {
  if (!pending || pending.id !== id) return null;
  const { data } = pending;
  pending = null;
  return data;
}

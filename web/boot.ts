// The first script of every page, inline in index.html before the stylesheet (build-web.mjs), so it
// runs as soon as the parser reaches it: on a dashboard's page it starts the series read at once
// when the page carries the dashboard and its source (a signed-in browser's /d/<id>, see
// src/http/web/page-data.ts), else it reads them first (web/lib/prefetch.ts). Either way the
// interface's module, still downloading, takes the reads from a shared global.
import { PAGE_DATA_ID, prefetchForLocation, type PageData } from './lib/prefetch';

function pageData(): PageData | null {
  const text = document.getElementById(PAGE_DATA_ID)?.textContent;
  if (!text) return null;
  try {
    return JSON.parse(text) as PageData;
  } catch {
    return null; // read the usual way
  }
}

prefetchForLocation(location.pathname, location.search, pageData());

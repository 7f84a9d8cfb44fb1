// Serves the web interface: hashed assets (immutable, precompressed) under /assets/, and the
// single-page app's index.html for the interface's own pages (PAGE_PATHS: the history-API routes
// of web/app.tsx, /d/<id>, /explore, ...), so that they load on a reload or a pasted URL. Any other
// GET outside the API answers 404 with the same index.html, whose router shows its "no page"
// notice (SPEC 2: an unknown path is 404). Runs after the API routes; /api/* stays the JSON 404.
// A dashboard's page (/d/<id>) of a signed-in browser carries the dashboard and its source in a
// JSON data block (page-data.ts), so that its first series read leaves while the HTML is parsed.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Context, Next } from 'koa';
import { defaultWebDir, loadWebAssets, type WebAssets, type WebFile } from './assets';

// Nothing remote, and of inline code only index.html's own script (web/boot.ts), allowed by its
// hash: no 'unsafe-inline', so an injected script does not run. A JSON data block is not code and
// CSP does not apply to it. Styles: only the stylesheet and CSSOM changes (el.style), which CSP
// allows without 'unsafe-inline'. data: images for the empty favicon.
export function contentSecurityPolicy(inlineScripts: readonly string[], framable = false): string {
  return [
    "default-src 'self'",
    ["script-src 'self'", ...inlineScripts].join(' '),
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    // A share link's page (/s/<token>) may be framed by any site: it is read-only and public to
    // whoever holds the link, and a wall display or Home Assistant's iframe card is what it is for.
    // Every other page refuses framing (clickjacking).
    framable ? 'frame-ancestors *' : "frame-ancestors 'none'",
  ].join('; ');
}

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/**
 * What a page's inline script reads (web/lib/prefetch.ts, PageData there): on /d/<id>, the
 * dashboard and its source as GET /dashboards/<id> and GET /bootstrap/sources present them. Null
 * when the request may not see them (no session, another organization's dashboard, no such one).
 */
export type PageDataReader = (ctx: Context, dashboardId: string) => Promise<object | null>;

/** The element web/boot.ts reads; its id is also in web/lib/prefetch.ts. */
const PAGE_DATA_ID = 'svc-page-data';

/**
 * JSON inside a <script type="application/json"> element: `<` (and `>`, `&`) escaped, so no text
 * of the data (a dashboard's name) can end the element or open a comment; U+2028/9 escaped too.
 */
export function pageDataBlock(data: object): string {
  const json = JSON.stringify(data).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `<script type="application/json" id="${PAGE_DATA_ID}">${json}</script>`;
}

/** A page answer made for this request (it holds the user's data): compressed now, never stored by others. */
function sendPage(ctx: Context, html: string): void {
  const raw = Buffer.from(html);
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.set('Vary', 'Accept-Encoding, Cookie');
  ctx.type = 'text/html; charset=utf-8';
  if (ctx.acceptsEncodings('br') === 'br') {
    ctx.set('Content-Encoding', 'br');
    ctx.body = brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
  } else if (ctx.acceptsEncodings('gzip') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = gzipSync(raw, { level: 4 });
  } else {
    ctx.body = raw;
  }
}

const NOT_BUILT =
  '<!doctype html><title>Interface not built</title><p>The web interface has not been built: run <code>npm run build:web</code> (npm start does it).</p>';

/** Paths the interface never answers: the API, and the Prometheus endpoint (SPEC 11) wherever it is mounted. */
function isApiPath(p: string): boolean {
  return p === '/api' || p.startsWith('/api/') || p === '/metrics';
}

/**
 * The paths web/app.tsx shows a page for, exactly as it matches them (case and all): the
 * dashboards list, a dashboard, explore, sources, account, sign-in, first-run setup, a share
 * link and an invitation. test/http/interface-assets.test.ts checks this list against web/app.tsx.
 */
const PAGE_PATHS: readonly RegExp[] = [
  /^\/$/,
  /^\/(explore|sources|account|signin|setup|monitors|channels)$/,
  /^\/d\/[^/]+$/,
  /^\/monitors\/[^/]+$/,
  /^\/s\/[A-Za-z0-9_-]+$/,
  /^\/invite$/,
];

/** Whether the interface has a page at this path (the path of the URL, still percent-encoded). */
export function isPagePath(p: string): boolean {
  return PAGE_PATHS.some((page) => page.test(p));
}

function sendFile(ctx: Context, file: WebFile, cacheControl: string): void {
  ctx.set(SECURITY_HEADERS);
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Vary', 'Accept-Encoding');
  ctx.type = file.type;
  // Brotli whenever the client takes it (it is smaller), whatever order the header lists them in.
  if (file.brotli && ctx.acceptsEncodings('br') === 'br') {
    ctx.set('Content-Encoding', 'br');
    ctx.body = file.brotli;
  } else if (file.gzip && ctx.acceptsEncodings('gzip') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = file.gzip;
  } else {
    ctx.body = file.body;
  }
}

/** The id of /d/<id> as web/app.tsx hands it to the page (decoded), or null. */
function dashboardIdOf(p: string): string | null {
  const m = /^\/d\/([^/]+)$/.exec(p);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

export function webInterface(dir: string = defaultWebDir(), pageData?: PageDataReader) {
  let assets: WebAssets | null = null;
  return async function serveInterface(ctx: Context, next: Next): Promise<void> {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || isApiPath(ctx.path)) return next();
    assets ??= loadWebAssets(dir);
    if (ctx.path.startsWith('/assets/')) {
      const file = assets.asset(ctx.path);
      if (!file) return next();
      ctx.set('Content-Security-Policy', contentSecurityPolicy(assets.inlineScripts));
      return sendFile(ctx, file, 'public, max-age=31536000, immutable');
    }
    if (!assets.index) {
      assets = null; // built later (npm run build:web while running): looked for again next time
      ctx.set(SECURITY_HEADERS);
      ctx.set('Content-Security-Policy', contentSecurityPolicy([]));
      ctx.status = 503;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = NOT_BUILT;
      return;
    }
    ctx.set('Content-Security-Policy', contentSecurityPolicy(assets.inlineScripts));
    if (!isPagePath(ctx.path)) {
      sendFile(ctx, assets.index, 'no-cache');
      ctx.status = 404; // the interface's own "no page" notice, as a 404
      return;
    }
    const dashboardId =
      ctx.method === 'GET' && pageData && assets.indexAround ? dashboardIdOf(ctx.path) : null;
    const data = dashboardId === null ? null : await pageData!(ctx, dashboardId);
    if (data) {
      ctx.set(SECURITY_HEADERS);
      const [before, after] = assets.indexAround!;
      sendPage(ctx, before + pageDataBlock(data) + after);
      return;
    }
    sendFile(ctx, assets.index, 'no-cache');
    if (dashboardId !== null) ctx.set('Vary', 'Accept-Encoding, Cookie'); // with a session, it would hold data
    if (ctx.path.startsWith('/s/')) {
      ctx.set('Content-Security-Policy', contentSecurityPolicy(assets.inlineScripts, true));
      ctx.remove('X-Frame-Options');
    }
  };
}

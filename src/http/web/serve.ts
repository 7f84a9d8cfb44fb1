// Serves the web interface: hashed assets (immutable, precompressed) under /assets/, and the
// single-page app's index.html for the interface's own pages (PAGE_PATHS: the history-API routes
// of web/app.tsx, /d/<id>, /explore, ...), so that they load on a reload or a pasted URL. Any other
// GET outside the API answers 404 with the same index.html, whose router shows its "no page"
// notice (SPEC 2: an unknown path is 404). Runs after the API routes; /api/* stays the JSON 404.
import type { Context, Next } from 'koa';
import { defaultWebDir, loadWebAssets, type WebAssets, type WebFile } from './assets';

// No inline script and nothing remote. Styles: only the stylesheet and CSSOM changes (el.style),
// which CSP allows without 'unsafe-inline'. data: images for the empty favicon.
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/**
 * A share link's page (/s/<token>) may be framed by any site: it is read-only and public to whoever
 * holds the link, and a wall display or Home Assistant's iframe card is what it is for. Every other
 * page refuses framing (clickjacking).
 */
const SHARE_PAGE_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY.replace("frame-ancestors 'none'", 'frame-ancestors *'),
};

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
  /^\/(explore|sources|account|signin|setup)$/,
  /^\/d\/[^/]+$/,
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

export function webInterface(dir: string = defaultWebDir()) {
  let assets: WebAssets | null = null;
  return async function serveInterface(ctx: Context, next: Next): Promise<void> {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || isApiPath(ctx.path)) return next();
    assets ??= loadWebAssets(dir);
    if (ctx.path.startsWith('/assets/')) {
      const file = assets.asset(ctx.path);
      if (!file) return next();
      return sendFile(ctx, file, 'public, max-age=31536000, immutable');
    }
    if (!assets.index) {
      assets = null; // built later (npm run build:web while running): looked for again next time
      ctx.set(SECURITY_HEADERS);
      ctx.status = 503;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = NOT_BUILT;
      return;
    }
    if (!isPagePath(ctx.path)) {
      sendFile(ctx, assets.index, 'no-cache');
      ctx.status = 404; // the interface's own "no page" notice, as a 404
      return;
    }
    sendFile(ctx, assets.index, 'no-cache');
    if (ctx.path.startsWith('/s/')) {
      ctx.set('Content-Security-Policy', SHARE_PAGE_HEADERS['Content-Security-Policy']);
      ctx.remove('X-Frame-Options');
    }
  };
}

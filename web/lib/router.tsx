// History-API routing: every page has a URL, back and forward work, and a reload or a pasted URL
// lands on the same view (the server answers index.html for every non-API path).
import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export interface Location {
  path: string;
  query: URLSearchParams;
}

const listeners = new Set<() => void>();
const current = (): Location => ({ path: location.pathname, query: new URLSearchParams(location.search) });

// Pages with unsaved work (the dashboard editor) register a guard: a navigation to another page
// asks first, and a reload or a closed tab gets the browser's own prompt (beforeunload).
const guards = new Set<() => string | null>();
const unsaved = (): string | null => {
  for (const guard of guards) {
    const message = guard();
    if (message) return message;
  }
  return null;
};
addEventListener('beforeunload', (e: BeforeUnloadEvent) => {
  if (!unsaved()) return;
  e.preventDefault();
  e.returnValue = '';
});

/** While mounted, `dirty` (a message, or null when nothing is unsaved) guards leaving the page. */
export function useLeaveGuard(dirty: () => string | null): void {
  useEffect(() => {
    guards.add(dirty);
    return () => void guards.delete(dirty);
  }, [dirty]);
}

/**
 * Goes to `url` in place. Leaving the page (another path) while a guard reports unsaved work asks
 * first, unless `force` (the sign-in redirect, which keeps the draft in sessionStorage instead).
 */
export function navigate(url: string, options: { replace?: boolean; force?: boolean } = {}): void {
  if (url === location.pathname + location.search) return;
  const leaving = new URL(url, location.href).pathname !== location.pathname;
  const message = leaving && !options.force ? unsaved() : null;
  if (message && !confirm(message)) return;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

/** The current location; re-renders on navigate() and on back/forward. */
export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return loc;
}

/** A path with a query built from a record: null values left out, '' written as a bare flag (`?kiosk`). */
export function withQuery(path: string, params: Record<string, string | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) search.set(k, v);
  const text = search.toString().replace(/=(&|$)/g, '$1'); // `?kiosk` rather than `?kiosk=`
  return text ? `${path}?${text}` : path;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { href: string; children?: ComponentChildren };

/** An <a> that navigates in place (a modified click still opens a new tab). */
export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}

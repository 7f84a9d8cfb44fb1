// Where sign-in returns to (`/signin?next=...`): only a path of this site. It must start with a
// single `/` (not `//` nor `/\`, which browsers read as another host), hold no backslash or control
// character, and resolve to this origin; anything else returns to `/`.
export function safeNext(
  next: string | null,
  origin: string = (globalThis as { location?: { origin: string } }).location?.origin ?? 'http://localhost',
): string {
  if (!next || !/^\/(?![/\\])/.test(next) || /[\\\u0000-\u001f\u007f]/.test(next)) return '/';
  try {
    const url = new URL(next, origin);
    return url.origin === new URL(origin).origin ? url.pathname + url.search + url.hash : '/';
  } catch {
    return '/';
  }
}

// What the screenshot test and bench/ui.ts share: whether the interface is served at all, signing
// in through its form, and waiting until every widget on a page has settled.
// The interface's contract they rely on (shell and widgets, issue 11): the sign-in page at
// `/signin` with an e-mail and a password field; a dashboard at `/d/<id>`; every widget root has
// class `widget`, `data-widget-id`, `data-widget-type` and `data-state` = loading|ready|empty|error.
import type { Page } from 'playwright-core';

/** Why the interface cannot be driven at `url`, or false when `/` answers HTML. */
export async function interfaceSkipReason(url: string): Promise<string | false> {
  try {
    const res = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
    const type = res.headers.get('content-type') ?? '';
    await res.arrayBuffer();
    if (res.status === 200 && type.startsWith('text/html')) return false;
    return `the interface is not served yet (GET / answered ${res.status} ${type || 'without a content type'}); build it and run again`;
  } catch (err) {
    return `the interface is not reachable at ${url}: ${(err as Error).message}`;
  }
}

/** Signs in through the interface's own form and waits until it has left the sign-in page. */
export async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(`${url}/signin`);
  await page
    .locator('input[type=email], input[name=email], input[autocomplete=username]')
    .first()
    .fill(email);
  const field = page.locator('input[type=password]').first();
  await field.fill(password);
  await field.press('Enter');
  await page.waitForURL((u) => !u.pathname.startsWith('/signin'), { timeout: 10_000 });
}

export interface WidgetStates {
  /** performance.now() in the page when every widget had settled: ms since navigation started */
  atMs: number;
  states: Record<string, string>;
}

/**
 * Waits until the page shows at least `minWidgets` widget roots and none is loading; resolves with
 * the page's own clock at that frame (polled every animation frame) and each widget's state.
 */
export async function waitForWidgets(page: Page, minWidgets = 1, timeoutMs = 15_000): Promise<WidgetStates> {
  const handle = await page.waitForFunction(
    // Runs in the page; the test project has no DOM types, hence the loose element type.
    (min: number) => {
      type Root = { dataset: Record<string, string | undefined> };
      const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<Root> } })
        .document;
      const roots = [...doc.querySelectorAll('.widget[data-widget-id]')];
      if (roots.length < min || roots.some((el) => el.dataset.state === 'loading' || !el.dataset.state))
        return false;
      const states = Object.fromEntries(roots.map((el) => [el.dataset.widgetId, el.dataset.state]));
      return { atMs: performance.now(), states };
    },
    minWidgets,
    { polling: 'raf', timeout: timeoutMs },
  );
  return (await handle.jsonValue()) as WidgetStates;
}

/** The widgets of `states` that are not in one of the `allowed` states, as "id=state". */
export function unsettled(states: Record<string, string>, allowed: readonly string[] = ['ready']): string[] {
  return Object.entries(states)
    .filter(([, state]) => !allowed.includes(state))
    .map(([id, state]) => `${id}=${state}`);
}

/**
 * Relative luminance (0 dark .. 1 light) of the page's background: the first opaque background
 * from the element at the top-left corner up to <html>, then <body>'s (CSS paints the canvas with
 * it when <html> has none); white when none is set.
 */
export async function backgroundLuminance(page: Page): Promise<number> {
  return page.evaluate(() => {
    type El = { parentElement: El | null } | null;
    const g = globalThis as unknown as {
      document: { elementFromPoint(x: number, y: number): El; documentElement: El; body: El };
      getComputedStyle(el: El): { backgroundColor: string };
    };
    const chain: El[] = [];
    for (let el = g.document.elementFromPoint(2, 2); el; el = el.parentElement) chain.push(el);
    chain.push(g.document.documentElement, g.document.body);
    for (const el of chain) {
      if (!el) continue;
      const m = /rgba?\(([\d.]+), ([\d.]+), ([\d.]+)(?:, ([\d.]+))?\)/.exec(
        g.getComputedStyle(el).backgroundColor,
      );
      if (!m || m[4] === '0') continue;
      const [r, gr, b] = [m[1], m[2], m[3]].map((c) => {
        const v = Number(c) / 255;
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
      }) as [number, number, number];
      return 0.2126 * r + 0.7152 * gr + 0.0722 * b;
    }
    return 1;
  });
}

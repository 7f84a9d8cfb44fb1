// Launches Debian's Chromium for the browser tests through playwright-core. A machine without it
// skips the browser tests with a message (CI installs it with apt: .ci/run).
import { existsSync } from 'node:fs';
import type { Browser, Locator } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or null when they can. */
export function browserSkipReason(): string | false {
  return existsSync(CHROMIUM_PATH)
    ? false
    : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH); browser tests skipped`;
}

// Flags that work on this machine kind: no sandbox as root, no GPU, and nothing that reaches out
// to the network (the machine's network is closed and Chromium would retry at every start).
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS, headless: true });
}

/**
 * The box of a chart's element once it is drawn. A chart drawn again (a new theme, a new size)
 * replaces its elements, and between the old and the new one the locator finds none or a hidden
 * one: Playwright's boundingBox answers null then, so this asks again until it has a box.
 */
export async function drawnBox(
  locator: Locator,
  timeoutMs = 5000,
): Promise<{ x: number; y: number; width: number; height: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const box = await locator.boundingBox({ timeout: timeoutMs });
    if (box && box.width > 0 && box.height > 0) return box;
    if (Date.now() > deadline) throw new Error(`no drawn box for ${String(locator)} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

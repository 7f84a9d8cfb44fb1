// axe-core in a real page: the serious and critical violations, as "rule: target" lines, so that an
// assertion's message names what to fix.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the pages' Content-Security-Policy (script-src 'self')
  // refuses a script tag, and should.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown) => Promise<any> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document);
    return (result.violations as Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>)
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')}`));
  });
  return found;
}

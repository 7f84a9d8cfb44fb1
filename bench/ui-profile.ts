// Where the interface's main thread goes while drawing a dashboard: a CPU profile of the page from
// navigation to all widgets ready (Chromium's own profiler through the DevTools protocol), summed by
// function (self time), top 25. Usage: node --import tsx bench/ui-profile.ts [days=83]
import { setupDemo } from '../src/demo/setup';
import { launchBrowser } from '../test/browser/browser';
import { signIn, waitForWidgets } from '../test/browser/demo-pages';
import { spawnService } from './helpers';

const DAYS = Number(process.argv[2] ?? 83);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
}

async function main(): Promise<void> {
  const server = await spawnService();
  const browser = await launchBrowser();
  try {
    const demo = await setupDemo(server.url);
    const { benchGridFor } = await import('./ui-grid');
    const res = await fetch(`${demo.url}/api/v1/dashboards`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: `Profile ${DAYS}d`,
        key: 'shop::web',
        source: { type: 'project', id: demo.projectId },
        default_timeframe: `${DAYS}d`,
        default_granularity: '1h',
        payload: { grid: benchGridFor() },
      }),
    });
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, demo.url, demo.email, demo.password);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
    await page.goto(`${demo.url}/d/${id}`);
    await waitForWidgets(page, 12, 60_000);
    const { profile } = (await cdp.send('Profiler.stop')) as {
      profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
    };
    const self = new Map<string, number>();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    for (let i = 0; i < profile.samples.length; i++) {
      const node = byId.get(profile.samples[i]!)!;
      const f = node.callFrame;
      const name = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
      self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
    }
    const total = [...self.values()].reduce((a, b) => a + b, 0);
    console.log(`total sampled ${total.toFixed(0)} ms`);
    for (const [name, ms] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
      console.log(`${ms.toFixed(1).padStart(8)} ms  ${name}`);
    }
    await context.close();
  } finally {
    await browser.close();
    await server.stop();
    server.remove();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

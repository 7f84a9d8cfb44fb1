// `service demo`: the pieces main.ts puts together around a started server. The data directory
// is chosen here (a fresh temp folder unless --data names one), the demo is created through the
// API, a live feed keeps the shop selling, and the banner tells a person where to go and how to
// sign in. Process concerns (signals, exit codes, stdout) stay in main.ts.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLiveFeed, type LiveFeed } from './live';
import { DemoError, setupDemo, type DemoInfo } from './setup';

export interface DemoDataDir {
  dir: string;
  /** made by the demo, removed when it stops */
  temporary: boolean;
}

/**
 * The demo's data directory: `--data DIR` when given (it must not hold a service database yet,
 * since the demo creates its account), else a new folder in the system's temp directory.
 * The demo ignores storage.data_dir from config.toml and SERVICE_DATA_DIR on purpose: a demo must
 * never write its account and generated metrics into a real installation's data.
 */
export function demoDataDir(flagDir: string | undefined): DemoDataDir {
  if (flagDir === undefined)
    return { dir: mkdtempSync(path.join(os.tmpdir(), 'service-demo-')), temporary: true };
  const dir = path.resolve(flagDir);
  if (existsSync(path.join(dir, 'service.db'))) {
    throw new DemoError(
      `demo: ${dir} already holds a service database; the demo needs a fresh directory ` +
        `(start that one with: service serve --data ${flagDir})`,
    );
  }
  if (existsSync(dir) && readdirSync(dir).some((name) => !name.startsWith('.'))) {
    throw new DemoError(`demo: ${dir} is not empty; give the demo a new or empty directory`);
  }
  return { dir, temporary: false };
}

/**
 * Sets the flags `service demo` needs on top of the user's: its data directory; registration and
 * projects on (it signs up and writes a project's metrics, whatever a config.toml for the real
 * installation in this folder says); and quieter logs unless SERVICE_LOG_LEVEL asks otherwise,
 * since the banner is what a person reads. Returns the data directory.
 */
export function prepareDemo(flags: Record<string, string>, logLevelFromEnv: boolean): DemoDataDir {
  const data = demoDataDir(flags['storage.data_dir']);
  flags['storage.data_dir'] = data.dir;
  flags['features.registration_enabled'] = 'true';
  flags['features.projects_enabled'] = 'true';
  if (!logLevelFromEnv) flags['log.level'] ??= 'warn';
  return data;
}

export interface RunningDemo {
  info: DemoInfo;
  seconds: number;
  stop(): Promise<void>;
}

/** A URL a browser on this machine can open: a wildcard listen address becomes the loopback one. */
export function localUrl(url: string): string {
  return url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');
}

/** Creates the demo on the server at `listenUrl` and starts its live feed. */
export async function runDemo(listenUrl: string, onFeedError: (err: Error) => void): Promise<RunningDemo> {
  const url = localUrl(listenUrl);
  const started = performance.now();
  const info = await setupDemo(url);
  const auth = { authorization: `Bearer ${info.sourceToken}`, 'x-service-source-id': info.projectId };
  let feed: LiveFeed | null = startLiveFeed(url, auth, info.model, {
    from: info.model.now,
    onError: onFeedError,
  });
  return {
    info,
    seconds: (performance.now() - started) / 1000,
    async stop() {
      await feed?.stop();
      feed = null;
    },
  };
}

/** Removes a temporary data directory (after the server has closed its database). */
export function removeDemoDataDir(data: DemoDataDir): void {
  if (data.temporary) rmSync(data.dir, { recursive: true, force: true });
}

/** The block printed once the demo is ready: where to go, how to sign in, what is in it. */
export function demoBanner(demo: RunningDemo, data: DemoDataDir): string {
  const { info } = demo;
  const open = (id: string) => `${info.url}/d/${id}`;
  const lines = [
    '',
    `  Demo ready in ${demo.seconds.toFixed(1)} s: a web shop with 30 days of metrics (${info.points.toLocaleString('en-US')} points).`,
    '',
    `    Open        ${info.url}/`,
    `    E-mail      ${info.email}`,
    `    Password    ${info.password}`,
    '',
    ...info.dashboards.map(
      (d, i) => `    ${i === 0 ? 'Dashboards' : '          '}  ${d.name.padEnd(20)} ${open(d.id)}`,
    ),
    `    Data        ${data.dir}${data.temporary ? ' (deleted on exit; --data DIR keeps it)' : ''}`,
    '',
    '    The shop keeps selling while the demo runs. Send your own points with:',
    `      curl -XPOST ${info.url}/api/v1/metrics -H 'authorization: Bearer ${info.sourceToken}' \\`,
    `        -H 'x-service-source-id: ${info.projectId}' -H 'content-type: application/json' \\`,
    `        -d '{"key":"shop::web","at":"${new Date().toISOString().slice(0, 19)}Z","values":{"requests":{"count":1}}}'`,
    '',
    '  Press Ctrl+C to stop.',
    '',
  ];
  return lines.join('\n');
}

// Starts the real server on a temp data dir and port 0, plus a tiny HTTP client for tests.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { startServer, type RunningServer, type StartOptions } from '../../src/server';
import { createLogger } from '../../src/lib/log';

export interface TestServer extends RunningServer {
  dataDir: string;
  /** close the server and delete its data dir */
  stop(): Promise<void>;
}

/** env-style overrides by SERVICE_* name, e.g. { SERVICE_PROJECTS_ENABLED: 'false' } */
export async function startTestServer(
  env: Record<string, string> = {},
  options: Omit<StartOptions, 'log'> = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  const config = loadConfig({
    env: { SERVICE_DATA_DIR: dataDir, SERVICE_PORT: '0', SERVICE_LOG_LEVEL: 'silent', ...env },
    cwd: dataDir,
  });
  const server = await startServer(config, {
    ...options,
    log: createLogger(env.SERVICE_LOG_LEVEL === undefined ? 'silent' : config.log.level),
  });
  return {
    ...server,
    dataDir,
    async stop() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  token?: string;
  sourceId?: string;
  headers?: Record<string, string>;
  /** raw body (string or bytes) sent as is; otherwise `body` is JSON-encoded */
  raw?: string | Uint8Array;
}

export async function request<T = any>(
  server: { url: string },
  method: string,
  urlPath: string,
  body?: unknown,
  opts: RequestOptions = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.sourceId) headers['x-service-source-id'] = opts.sourceId;
  let payload: string | Uint8Array | undefined = opts.raw;
  if (payload === undefined && body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(server.url + urlPath, { method, headers, body: payload });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

let counter = 0;
/** A unique email per call, so tests never collide. */
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${Date.now()}@example.com`;
}

export interface Agent {
  email: string;
  password: string;
  userToken: string;
  organizationId: string;
}

/** Signs up a user with an organization (the agent flow's first steps). */
export async function signupWithOrganization(server: { url: string }, orgName?: string): Promise<Agent> {
  const email = uniqueEmail();
  const password = 'correct horse battery';
  const res = await request(server, 'POST', '/api/v1/bootstrap/signup', {
    email,
    password,
    organization_name: orgName ?? `Org ${email}`,
  });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  return {
    email,
    password,
    userToken: res.body.data.token.value,
    organizationId: res.body.data.organization.id,
  };
}

export interface ProjectAgent extends Agent {
  sourceId: string;
  sourceToken: string;
}

/** Signup -> project -> source token: ready to call the metrics endpoints. */
export async function createProjectWithToken(
  server: { url: string },
  project: Record<string, unknown> = {},
  token: Record<string, unknown> = {},
): Promise<ProjectAgent> {
  const agent = await signupWithOrganization(server);
  const p = await request(
    server,
    'POST',
    '/api/v1/bootstrap/projects',
    { name: 'Project', ...project },
    { token: agent.userToken },
  );
  if (p.status !== 201) throw new Error(`project failed: ${p.status} ${p.text}`);
  const sourceId = p.body.data.source.id as string;
  const t = await request(
    server,
    'POST',
    '/api/v1/bootstrap/source-tokens',
    { source_type: 'project', source_id: sourceId, ...token },
    { token: agent.userToken },
  );
  if (t.status !== 201) throw new Error(`source token failed: ${t.status} ${t.text}`);
  return { ...agent, sourceId, sourceToken: t.body.data.token.value };
}

// Fills a running service with the demo through its public API only, as any client would: sign
// up, create the project and a source token, back-fill 30 days of the shop's metrics through the
// batch endpoint, then create a dashboard group and the two dashboards. Any refusal stops the demo
// with the server's answer, so a widget the server's rules reject is never silently dropped.
import { randomBytes } from 'node:crypto';
import { ordersDashboard, trafficDashboard, type DashboardSpec } from './dashboards';
import { historyBatches } from './history';
import { ZoneClock, incidentsBefore } from './rhythm';
import { type Point, type ShopModel } from './shop';

export const DEMO_EMAIL = 'demo@example.com';
export const DEMO_TIME_ZONE = 'Europe/Bratislava';
export const DEMO_DAYS = 30;
export const DEMO_GRANULARITIES = ['1m', '5m', '1h', '1d', '1w', '1mo'];
const DAY_MS = 86_400_000;

export interface DemoOptions {
  /** fixes the generated values (default 42) */
  seed?: number;
  /** the end of the generated month (default: the current time) */
  now?: number;
  /** default: a random one, printed */
  password?: string;
}

export interface DemoInfo {
  url: string;
  email: string;
  password: string;
  userToken: string;
  organizationId: string;
  projectId: string;
  sourceToken: string;
  dashboards: Array<{ id: string; name: string; key: string }>;
  groupId: string;
  points: number;
  model: ShopModel;
}

export class DemoError extends Error {}

/** A password that is easy to type from the terminal: `demo-` and 3 groups of 4 letters/digits. */
export function demoPassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  const bytes = randomBytes(12);
  const chars = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
  return `demo-${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8)}`;
}

/** JSON over HTTP that must answer `expected`, else a DemoError quoting the step and the answer. */
async function call(
  base: string,
  step: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
  expected = 201,
) {
  let res: Response;
  try {
    res = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    // fetch says only "fetch failed"; the cause names the problem (refused, a port fetch blocks...).
    const cause = (err as Error & { cause?: Error }).cause?.message;
    throw new DemoError(`demo: ${step} failed: ${(err as Error).message}${cause ? ` (${cause})` : ''}`);
  }
  const text = await res.text();
  if (res.status !== expected)
    throw new DemoError(`demo: ${step} failed: HTTP ${res.status} ${text.slice(0, 2000)}`);
  return JSON.parse(text).data;
}

/** Revenue goal of the orders dashboard: a round number a little above a typical month. */
function revenueGoal(points: number, revenue: number): number {
  if (points === 0) return 100_000;
  return Math.ceil((revenue * 1.08) / 10_000) * 10_000;
}

/** Sends the points of [from, to) through the batch endpoint; returns the count and total revenue. */
export async function sendHistory(
  base: string,
  auth: Record<string, string>,
  model: ShopModel,
  from: number,
  to: number,
): Promise<{ points: number; revenue: number }> {
  let points = 0;
  let revenue = 0;
  // Two requests in flight: the server commits one batch while the next is generated and sent.
  const inFlight: Promise<unknown>[] = [];
  for (const batch of historyBatches(model, from, to)) {
    points += batch.length;
    revenue += allOrdersRevenue(batch);
    const sending = call(base, 'sending metrics', 'POST', '/api/v1/metrics/batch', { points: batch }, auth);
    sending.catch(() => undefined); // awaited below; this only keeps a second failure from going unhandled
    inFlight.push(sending);
    if (inFlight.length >= 2) await inFlight.shift();
  }
  await Promise.all(inFlight);
  return { points, revenue };
}

function allOrdersRevenue(batch: Point[]): number {
  let sum = 0;
  for (const point of batch) {
    if (point.key !== 'shop::all::orders') continue;
    sum += (point.values.orders as { revenue?: number } | undefined)?.revenue ?? 0;
  }
  return sum;
}

/** Creates the whole demo on the service at `base` (its data directory should be fresh). */
export async function setupDemo(base: string, options: DemoOptions = {}): Promise<DemoInfo> {
  const now = options.now ?? Date.now();
  const password = options.password ?? demoPassword();
  const clock = new ZoneClock(DEMO_TIME_ZONE);
  const model: ShopModel = { seed: options.seed ?? 42, clock, now, incidents: incidentsBefore(clock, now) };

  const signup = await call(
    base,
    'creating the demo account',
    'POST',
    '/api/v1/bootstrap/signup',
    {
      email: DEMO_EMAIL,
      password,
      name: 'Demo',
      organization_name: 'Demo Shop',
      token_name: 'demo setup',
    },
    {},
  );
  const user = { authorization: `Bearer ${signup.token.value}` };
  const project = await call(
    base,
    'creating the project',
    'POST',
    '/api/v1/bootstrap/projects',
    {
      name: 'Web shop',
      time_zone: DEMO_TIME_ZONE,
      granularities: DEMO_GRANULARITIES,
      default_granularity: '1h',
      default_timeframe: '7d',
    },
    user,
  );
  const projectId = project.source.id as string;
  const minted = await call(
    base,
    'minting a source token',
    'POST',
    '/api/v1/bootstrap/source-tokens',
    {
      source_type: 'project',
      source_id: projectId,
      name: 'demo shop',
    },
    user,
  );
  const sourceToken = minted.token.value as string;
  const auth = { authorization: `Bearer ${sourceToken}`, 'x-service-source-id': projectId };

  // From a local midnight, so a 30-day view by the day starts with a whole day.
  const sent = await sendHistory(base, auth, model, clock.startOfDay(now - DEMO_DAYS * DAY_MS), now);
  const group = await call(
    base,
    'creating the dashboard group',
    'POST',
    '/api/v1/dashboard-groups',
    { name: 'Web shop' },
    user,
  );
  const specs: DashboardSpec[] = [
    trafficDashboard(),
    ordersDashboard(revenueGoal(sent.points, sent.revenue)),
  ];
  const dashboards = [];
  for (const spec of specs) {
    const created = await call(
      base,
      `creating the dashboard "${spec.name}"`,
      'POST',
      '/api/v1/dashboards',
      {
        ...spec,
        source: { type: 'project', id: projectId },
        group_id: group.id,
      },
      user,
    );
    dashboards.push({ id: created.id as string, name: created.name as string, key: created.key as string });
  }
  return {
    url: base,
    email: DEMO_EMAIL,
    password,
    userToken: signup.token.value,
    organizationId: signup.organization.id,
    projectId,
    sourceToken,
    dashboards,
    groupId: group.id,
    points: sent.points,
    model,
  };
}

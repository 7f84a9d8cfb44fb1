// The demo web shop's metric points: for one time slot, the traffic of the site (`shop::web`:
// requests by status and endpoint, latency sum/count and a latency histogram, gauges set through
// `assert`) and the orders per country (`shop::<country>::orders`, plus `shop::all::orders` with the
// per-country split). Counts are drawn, not simulated request by request, so 30 days generate in
// well under a second.
import { SlotRandom } from './random';
import { type Incident, ZoneClock, growth, incidentAt, ordersShape, trafficShape } from './rhythm';

export const WEB_KEY = 'shop::web';
export const ALL_ORDERS_KEY = 'shop::all::orders';
export const ordersKey = (country: string) => `shop::${country}::orders`;

/** Countries with their share of orders and how they like to pay (card, paypal, bank, cash). */
export const COUNTRIES: ReadonlyArray<{ code: string; name: string; share: number; payment: number[] }> = [
  { code: 'SK', name: 'Slovakia', share: 0.34, payment: [45, 12, 8, 35] },
  { code: 'CZ', name: 'Czechia', share: 0.26, payment: [50, 10, 12, 28] },
  { code: 'AT', name: 'Austria', share: 0.12, payment: [55, 30, 12, 3] },
  { code: 'DE', name: 'Germany', share: 0.1, payment: [35, 45, 18, 2] },
  { code: 'PL', name: 'Poland', share: 0.1, payment: [40, 15, 40, 5] },
  { code: 'HU', name: 'Hungary', share: 0.08, payment: [48, 14, 10, 28] },
];
const PAYMENTS = ['card', 'paypal', 'bank_transfer', 'cash_on_delivery'];
const CHANNELS = ['organic', 'paid', 'email', 'social', 'referral'];
const CHANNEL_WEIGHTS = [42, 24, 12, 14, 8];
const CATEGORIES = ['electronics', 'fashion', 'home', 'books', 'toys', 'sports'];
const CATEGORY_WEIGHTS = [22, 30, 18, 10, 9, 11];

const STATUSES = ['200', '201', '301', '304', '404', '500', '503'];
const ENDPOINTS = ['home', 'product', 'search', 'cart', 'checkout', 'api'];
const ENDPOINT_WEIGHTS = [20, 34, 15, 10, 5, 16];
// Latency histogram buckets (upper bounds in ms), as Trifle's linear designator names them.
export const LATENCY_BUCKETS = ['50', '100', '150', '200', '300', '500', '750', '1000', '1000+'];
const LATENCY_BOUNDS = [50, 100, 150, 200, 300, 500, 750, 1000, Infinity];
// Basket heatmap: items per order by order value (EUR).
export const BASKET_ITEMS = ['1', '2', '3', '4', '5+'];
export const BASKET_VALUES = ['25', '50', '100', '200', '400', '400+'];
const VALUE_BOUNDS = [25, 50, 100, 200, 400, Infinity];

const PEAK_REQUESTS_PER_MINUTE = 900;
// About 2% of visits end in an order: some 1,800 orders on an ordinary day.
const PEAK_ORDERS_PER_MINUTE = 3.2;
const LATENCY_SIGMA = 0.7;

export interface Point {
  key: string;
  at: string;
  values: Record<string, unknown>;
  operation?: 'assert';
}

export interface ShopModel {
  seed: number;
  clock: ZoneClock;
  /** the end of the generated month: growth and incidents are placed relative to it */
  now: number;
  incidents: Incident[];
}

/** Standard normal CDF (Abramowitz-Stegun 7.1.26 through erf), good to about 1e-7. */
function normalCdf(x: number): number {
  const t = 1 / (1 + 0.3275911 * (Math.abs(x) / Math.SQRT2));
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** Share of log-normal latencies (median `median`) falling in each histogram bucket. */
function latencyShares(median: number): number[] {
  let below = 0;
  return LATENCY_BOUNDS.map((bound) => {
    const cdf = bound === Infinity ? 1 : normalCdf(Math.log(bound / median) / LATENCY_SIGMA);
    const share = cdf - below;
    below = cdf;
    return share;
  });
}

/** Days differ (weather, paydays, news): one factor per UTC day, which turns at night locally. */
function dayFactor(model: ShopModel, ms: number): number {
  return new SlotRandom(model.seed ^ 0xda7, Math.floor(ms / 86_400_000)).logNormal(1, 0.06);
}

/** `{name: count}` for the non-zero counts: a client tracks what happened, not what did not. */
function named(names: readonly string[], counts: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  names.forEach((name, i) => {
    if (counts[i]) out[name] = counts[i]!;
  });
  return out;
}

function webPoints(model: ShopModel, start: number, seconds: number, at: string): Point[] {
  const rnd = new SlotRandom(model.seed, start / 1000);
  const hourly = new SlotRandom(model.seed ^ 0x5eed, Math.floor(start / 3_600_000));
  const { hour, weekday } = model.clock.local(start);
  const incident = incidentAt(model.incidents, start);
  const load = trafficShape(hour, weekday) * growth(start, model.now) * (incident?.boost ?? 1);
  // One slow wobble per hour, so neighbouring minutes look alike and hours differ a little.
  const rate =
    PEAK_REQUESTS_PER_MINUTE * load * dayFactor(model, start) * hourly.logNormal(1, 0.07) * (seconds / 60);
  const count = rnd.poisson(rate);
  const unavailable = rnd.poisson(count * (incident?.unavailable ?? 0.0002));
  const failing = rnd.poisson(count * (incident?.failing ?? 0.0025));
  const served = Math.max(0, count - unavailable - failing);
  const [ok = 0, created = 0, moved = 0, cached = 0, missing = 0] = rnd.split(served, [930, 12, 6, 36, 16]);
  const medianMs = 62 * (1 + 0.45 * load * load) * (incident?.slowdown ?? 1);
  const latencyCounts = rnd.split(count, latencyShares(medianMs));
  const meanMs = medianMs * Math.exp((LATENCY_SIGMA * LATENCY_SIGMA) / 2) * rnd.logNormal(1, 0.04);
  const points: Point[] = [];
  if (count > 0) {
    points.push({
      key: WEB_KEY,
      at,
      values: {
        requests: {
          count,
          status: named(STATUSES, [ok, created, moved, cached, missing, failing, unavailable]),
          endpoint: named(ENDPOINTS, rnd.split(count, ENDPOINT_WEIGHTS)),
        },
        ...(failing + unavailable > 0 ? { errors: { count: failing + unavailable } } : {}),
        latency: { sum: Math.round(count * meanMs), count, dist: named(LATENCY_BUCKETS, latencyCounts) },
      },
    });
  }
  // Gauges are readings, not events: `assert` sets them, so a bucket holds the last reading.
  const activeUsers = Math.round((PEAK_REQUESTS_PER_MINUTE / 4.2) * load * rnd.logNormal(1, 0.05));
  const queueDepth = Math.max(
    0,
    Math.round(3 * load + (incident ? 25 * incident.slowdown : 0) + 2 * rnd.normal()),
  );
  const cacheHit = Math.min(99.5, 94 - 4 * load - (incident ? 20 : 0) + rnd.normal());
  points.push({
    key: WEB_KEY,
    at,
    operation: 'assert',
    values: {
      gauges: {
        active_users: activeUsers,
        queue_depth: queueDepth,
        cache_hit_ratio: Math.round(cacheHit * 10) / 10,
      },
    },
  });
  return points;
}

interface Orders {
  count: number;
  revenue: number;
  items: number;
  payment: number[];
  channel: number[];
  category: number[];
  basket: number[][];
  started: number;
  refunds: number;
}

function drawOrders(rnd: SlotRandom, lambda: number, payment: readonly number[], campaign: boolean): Orders {
  const count = rnd.poisson(lambda);
  const abandoned = rnd.poisson(lambda * 1.7);
  const orders: Orders = {
    count,
    revenue: 0,
    items: 0,
    payment: PAYMENTS.map(() => 0),
    channel: CHANNELS.map(() => 0),
    category: CATEGORIES.map(() => 0),
    basket: BASKET_ITEMS.map(() => BASKET_VALUES.map(() => 0)),
    started: count + abandoned,
    refunds: rnd.poisson(lambda * 0.02),
  };
  const channelWeights = campaign
    ? CHANNEL_WEIGHTS.map((w, i) => (CHANNELS[i] === 'email' ? w * 6 : w))
    : CHANNEL_WEIGHTS;
  for (let i = 0; i < count; i++) {
    const items = 1 + rnd.poisson(1.1);
    const value = Math.round(rnd.logNormal(24 + 14 * items, 0.5) * 100) / 100;
    orders.revenue += value;
    orders.items += items;
    orders.payment[rnd.pick(payment)]! += 1;
    orders.channel[rnd.pick(channelWeights)]! += 1;
    for (let j = 0; j < items; j++) orders.category[rnd.pick(CATEGORY_WEIGHTS)]! += 1;
    const v = VALUE_BOUNDS.findIndex((bound) => value <= bound);
    orders.basket[Math.min(items, BASKET_ITEMS.length) - 1]![v]! += 1;
  }
  orders.revenue = Math.round(orders.revenue * 100) / 100;
  return orders;
}

function orderValues(o: Orders): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  if (o.started > 0)
    values.checkout = named(['started', 'completed', 'abandoned'], [o.started, o.count, o.started - o.count]);
  if (o.count > 0) {
    values.orders = { count: o.count, items: o.items, revenue: o.revenue };
    values.payment = named(PAYMENTS, o.payment);
    values.channel = named(CHANNELS, o.channel);
    values.category = named(CATEGORIES, o.category);
    const basket: Record<string, unknown> = {};
    BASKET_ITEMS.forEach((items, i) => {
      const row = named(BASKET_VALUES, o.basket[i]!);
      if (Object.keys(row).length > 0) basket[items] = row;
    });
    values.basket = basket;
  }
  if (o.refunds > 0) values.refunds = { count: o.refunds };
  return values;
}

function orderPoints(model: ShopModel, start: number, seconds: number, at: string): Point[] {
  const { hour, weekday } = model.clock.local(start);
  const incident = incidentAt(model.incidents, start);
  const outage = incident ? 1 - 5 * incident.unavailable - 5 * incident.failing : 1;
  const shape = ordersShape(hour, weekday) * dayFactor(model, start);
  const base = PEAK_ORDERS_PER_MINUTE * shape * growth(start, model.now) * (incident?.boost ?? 1);
  const lambda = base * Math.max(0.1, outage) * (seconds / 60);
  const points: Point[] = [];
  const perCountry: Record<string, number> = {};
  const all: Orders[] = [];
  COUNTRIES.forEach((country, c) => {
    const rnd = new SlotRandom(model.seed + 101 * (c + 1), start / 1000);
    const orders = drawOrders(rnd, lambda * country.share, country.payment, (incident?.boost ?? 1) > 1);
    if (orders.started === 0 && orders.refunds === 0) return; // nothing happened: no point
    if (orders.count > 0) perCountry[country.code] = orders.count;
    all.push(orders);
    points.push({ key: ordersKey(country.code), at, values: orderValues(orders) });
  });
  if (all.length > 0) {
    const sum = all.reduce(addOrders);
    const values = orderValues(sum);
    if (sum.count > 0) values.country = perCountry;
    points.push({ key: ALL_ORDERS_KEY, at, values });
  }
  return points;
}

function addOrders(a: Orders, b: Orders): Orders {
  const add = (x: number[], y: number[]) => x.map((n, i) => n + (y[i] ?? 0));
  return {
    count: a.count + b.count,
    revenue: Math.round((a.revenue + b.revenue) * 100) / 100,
    items: a.items + b.items,
    payment: add(a.payment, b.payment),
    channel: add(a.channel, b.channel),
    category: add(a.category, b.category),
    basket: a.basket.map((row, i) => add(row, b.basket[i]!)),
    started: a.started + b.started,
    refunds: a.refunds + b.refunds,
  };
}

/** Every point of the slot [start, start + seconds) of the shop, stamped at the slot's start. */
export function slotPoints(model: ShopModel, start: number, seconds: number): Point[] {
  const at = new Date(start).toISOString().replace('.000Z', 'Z');
  return [...webPoints(model, start, seconds, at), ...orderPoints(model, start, seconds, at)];
}

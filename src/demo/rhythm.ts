// The web shop's rhythm: how busy it is at an instant, in the shop's own time zone (people shop
// after work and on Sunday evenings, not at 4 a.m. UTC), plus a slow growth and a few events placed
// relative to the last day so that every demo, whenever it runs, has them in its 30 days.

const DAY_MS = 86_400_000;
const QUARTER_MS = 900_000;

/** Local hour of day (fractional) and day of week (0 = Monday) of an instant in a zone. */
export class ZoneClock {
  private readonly format: Intl.DateTimeFormat;
  // Offsets change at most at quarter hours, so one Intl call per quarter serves 15 minutes.
  private readonly quarters = new Map<number, { hour: number; weekday: number }>();

  constructor(readonly timeZone: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'short',
      hour: 'numeric',
      minute: 'numeric',
    });
  }

  local(ms: number): { hour: number; weekday: number } {
    const quarter = Math.floor(ms / QUARTER_MS);
    let start = this.quarters.get(quarter);
    if (!start) {
      const parts = this.format.formatToParts(quarter * QUARTER_MS);
      const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
      const weekday = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(get('weekday'));
      start = { hour: Number(get('hour')) + Number(get('minute')) / 60, weekday };
      if (this.quarters.size > 10_000) this.quarters.clear();
      this.quarters.set(quarter, start);
    }
    return { hour: start.hour + (ms - quarter * QUARTER_MS) / 3_600_000, weekday: start.weekday };
  }

  /** Epoch ms of the local midnight starting the day that holds `ms` (good to the minute). */
  startOfDay(ms: number): number {
    return ms - Math.round(this.local(ms).hour * 60) * 60_000;
  }
}

/** A bell around `center` hours with width `width`, wrapping around midnight. */
function bell(hour: number, center: number, width: number): number {
  const d = Math.min(Math.abs(hour - center), 24 - Math.abs(hour - center));
  return Math.exp(-(d * d) / (2 * width * width));
}

// Day-of-week factors, Monday first: quiet Saturdays, busy Sunday evenings.
const TRAFFIC_WEEK = [1.0, 1.02, 0.99, 1.03, 0.93, 0.8, 1.05];
const ORDERS_WEEK = [1.05, 1.0, 0.97, 1.0, 0.9, 0.85, 1.22];

/** Share of the peak request rate at a local hour (about 0.12 at night, 1 at 20:30). */
export function trafficShape(hour: number, weekday: number): number {
  const day = 0.1 + 0.55 * bell(hour, 11, 2.6) + 0.35 * bell(hour, 15.5, 2.5) + 0.95 * bell(hour, 20.5, 2.1);
  return day * (TRAFFIC_WEEK[weekday] ?? 1);
}

/** Share of the peak order rate: buying leans later into the evening than browsing. */
export function ordersShape(hour: number, weekday: number): number {
  const day = 0.05 + 0.45 * bell(hour, 12.3, 2) + 0.3 * bell(hour, 16, 2.5) + 1.0 * bell(hour, 21, 1.8);
  return day * (ORDERS_WEEK[weekday] ?? 1);
}

export interface Incident {
  name: string;
  from: number;
  to: number;
  /** share of requests answered 503 */
  unavailable: number;
  /** share answered 500 */
  failing: number;
  /** latency multiplier */
  slowdown: number;
  /** traffic and order multiplier (a campaign) */
  boost: number;
}

/**
 * The events of the demo's month, at fixed local times counted back from the day of `now`:
 * an outage nine days ago, a bad deploy two days ago and an e-mail campaign five days ago.
 */
export function incidentsBefore(clock: ZoneClock, now: number): Incident[] {
  const today = clock.startOfDay(now);
  const at = (daysAgo: number, hour: number, minute = 0) =>
    today - daysAgo * DAY_MS + (hour * 60 + minute) * 60_000;
  const none = { unavailable: 0, failing: 0, slowdown: 1, boost: 1 };
  return [
    {
      ...none,
      name: 'database failover',
      from: at(9, 14, 10),
      to: at(9, 14, 45),
      unavailable: 0.09,
      slowdown: 3.2,
    },
    { ...none, name: 'bad deploy', from: at(2, 10, 20), to: at(2, 10, 34), failing: 0.04, slowdown: 1.8 },
    {
      ...none,
      name: 'newsletter campaign',
      from: at(5, 18, 0),
      to: at(5, 22, 30),
      boost: 1.7,
      slowdown: 1.15,
    },
  ];
}

/** The incident active at `ms`, if any. */
export function incidentAt(incidents: readonly Incident[], ms: number): Incident | undefined {
  return incidents.find((incident) => ms >= incident.from && ms < incident.to);
}

/** Slow growth: the shop is about 15% busier at the end of the month than at its start. */
export function growth(ms: number, now: number): number {
  return 1 + 0.15 * (1 - Math.min(1, Math.max(0, (now - ms) / (30 * DAY_MS))));
}

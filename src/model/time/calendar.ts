// Segment arithmetic on the local wall clock (SPEC 5.1). A "wall" value is a local date and time
// written as milliseconds as if the zone were UTC; it has no DST, so a wall day is always 86,400,000
// wall milliseconds and calendar moves are exact. Zones are applied elsewhere (model/time/zone-clock.ts).

import type { Granularity } from './granularity';
import { UNIT_SPANS } from '../../shared/spans';

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const mod = (a: number, b: number) => ((a % b) + b) % b;

/**
 * The multiple of `step` at or below `value`. Division and floor rather than `%`: on millisecond
 * values beyond 32 bits `%` is a slow floating-point remainder, and this runs per ingested point.
 * Exact for integers below 2^53.
 */
const floorTo = (value: number, step: number) => Math.floor(value / step) * step;

/** Day number (days since 1970-01-01) of a proleptic Gregorian date; months may overflow. */
export function dayNumber(year: number, month: number, day: number): number {
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 to 1900..1999.
  return new Date(0).setUTCFullYear(year, month - 1, day) / DAY_MS;
}

function yearMonthOf(day: number): { year: number; month: number } {
  const date = new Date(day * DAY_MS);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1 };
}

/** 0 = Sunday .. 6 = Saturday (1970-01-01 was a Thursday). */
const weekdayOf = (day: number) => mod(day + 4, 7);

/** First day of `year` that falls on `beginningOfWeek` (1 = Monday .. 7 = Sunday). */
export function firstWeekStart(year: number, beginningOfWeek: number): number {
  const jan1 = dayNumber(year, 1, 1);
  return jan1 + mod((beginningOfWeek % 7) - weekdayOf(jan1), 7);
}

export const isSubDay = (g: Granularity) => g.unit === 's' || g.unit === 'm' || g.unit === 'h';

/** Floors inside a parent period: segments of `step` restart at every multiple of `parent`. */
function floorWithin(wall: number, parent: number, step: number): number {
  const parentStart = floorTo(wall, parent);
  return parentStart + Math.floor((wall - parentStart) / step) * step;
}

/** Start day of the day-or-larger segment holding `day`. */
function floorDay(day: number, g: Granularity, beginningOfWeek: number): number {
  const n = g.n;
  const { year, month } = yearMonthOf(day);
  switch (g.unit) {
    case 'w': {
      const first = firstWeekStart(year, beginningOfWeek);
      // Days of January before the first week start form their own bucket from 1 January.
      if (day < first) return dayNumber(year, 1, 1);
      return first + Math.floor((day - first) / (7 * n)) * 7 * n;
    }
    case 'mo':
      return dayNumber(year, Math.floor((month - 1) / n) * n + 1, 1);
    case 'q':
      return dayNumber(year, Math.floor(Math.floor((month - 1) / 3) / n) * n * 3 + 1, 1);
    case 'y':
      return dayNumber(Math.floor(year / n) * n, 1, 1);
    default: {
      const jan1 = dayNumber(year, 1, 1);
      return jan1 + Math.floor((day - jan1) / n) * n;
    }
  }
}

/** The segment boundary at or before `wall` (the wall-clock floor). */
export function floorWall(wall: number, g: Granularity, beginningOfWeek: number): number {
  switch (g.unit) {
    case 's':
      return floorWithin(wall, MINUTE_MS, g.n * SECOND_MS);
    case 'm':
      return floorWithin(wall, HOUR_MS, g.n * MINUTE_MS);
    case 'h':
      return floorWithin(wall, DAY_MS, g.n * HOUR_MS);
    default:
      return floorDay(Math.floor(wall / DAY_MS), g, beginningOfWeek) * DAY_MS;
  }
}

/** Day after the day-or-larger segment starting on `day`, before re-flooring. */
function advanceDay(day: number, g: Granularity): number {
  const n = g.n;
  const { year, month } = yearMonthOf(day);
  const nextJan1 = dayNumber(year + 1, 1, 1);
  switch (g.unit) {
    case 'w':
      return Math.min(day + 7 * n, nextJan1);
    case 'mo':
      return Math.min(dayNumber(year, month + n, 1), nextJan1);
    case 'q':
      return Math.min(dayNumber(year, month + 3 * n, 1), nextJan1);
    case 'y':
      return dayNumber(year + n, 1, 1);
    default:
      return Math.min(day + n, nextJan1);
  }
}

/**
 * The boundary after `boundary`: the earlier of boundary + N units and the next parent anchor
 * (minute, hour, day, 1 January), floored again (SPEC 5.1).
 */
export function nextBoundaryWall(boundary: number, g: Granularity, beginningOfWeek: number): number {
  switch (g.unit) {
    case 's':
      return Math.min(boundary + g.n * SECOND_MS, floorTo(boundary, MINUTE_MS) + MINUTE_MS);
    case 'm':
      return Math.min(boundary + g.n * MINUTE_MS, floorTo(boundary, HOUR_MS) + HOUR_MS);
    case 'h':
      return Math.min(boundary + g.n * HOUR_MS, floorTo(boundary, DAY_MS) + DAY_MS);
    default: {
      const next = advanceDay(Math.floor(boundary / DAY_MS), g);
      return floorDay(next, g, beginningOfWeek) * DAY_MS;
    }
  }
}

/** Longest nominal (wall-clock) length of one bucket; used to bound bucket counts cheaply. */
export function nominalMaxMs(g: Granularity): number {
  const n = g.n;
  const longest = UNIT_SPANS[g.unit].longest;
  switch (g.unit) {
    case 's':
      return Math.min(n * longest, UNIT_SPANS.m.longest);
    case 'm':
      return Math.min(n * longest, UNIT_SPANS.h.longest);
    case 'h':
      return Math.min(n * longest, UNIT_SPANS.d.longest);
    case 'y':
      return n * longest;
    default:
      return Math.min(n * longest, UNIT_SPANS.y.longest);
  }
}

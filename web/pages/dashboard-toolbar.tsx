// The dashboard's time controls: presets, custom range, back/forward by the window's span,
// granularity (the source's allowed list), auto-refresh, and one input per segment.
import { useState } from 'preact/hooks';
import type { Segment } from '../lib/types';
import { isoSeconds, MAX_BUCKETS, PRESETS, REFRESH, spanMs, type ViewState } from '../lib/view';
import { formatInZone, fromZoneInput, toZoneInput } from '../lib/zone';

export interface ToolbarProps {
  view: ViewState;
  range: { from: number; to: number };
  granularity: string;
  /** the granularity asked for (the view's or the dashboard's), when the range made it coarser */
  wanted?: string | null;
  granularities: string[];
  timeZone: string;
  setView: (view: ViewState) => void;
  shift: (direction: -1 | 1) => void;
  /** read the series again now (the dashboard's "refresh now") */
  refreshNow?: () => void;
}

export { formatInZone };

/** From and to as wall-clock times of the source's zone (not the browser's). */
function CustomRange({
  range,
  timeZone,
  apply,
}: {
  range: { from: number; to: number };
  timeZone: string;
  apply: (from: number, to: number) => void;
}) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<{ field: 'from' | 'to'; message: string } | null>(null);
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Custom…
      </button>
    );
  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const from = fromZoneInput(String(form.get('from')).trim().replace(' ', 'T'), timeZone);
    const to = fromZoneInput(String(form.get('to')).trim().replace(' ', 'T'), timeZone);
    if (from === null) setError({ field: 'from', message: 'From must look like 2026-01-24 09:30' });
    else if (to === null) setError({ field: 'to', message: 'To must look like 2026-01-24 17:00' });
    else if (to <= from) setError({ field: 'to', message: 'To must be after From' });
    else {
      setError(null);
      apply(from, to);
      setOpen(false);
    }
  };
  // Text in the zone's 24-hour wall clock (YYYY-MM-DD HH:MM): a datetime-local input follows the
  // browser's locale, which shows a 12-hour clock in en-US whatever the dashboard's zone.
  const wall = (ms: number) => toZoneInput(ms, timeZone).replace('T', ' ');
  const field = (name: 'from' | 'to', label: string, ms: number) => (
    <label>
      {label}{' '}
      <input
        name={name}
        defaultValue={wall(ms)}
        required
        size={16}
        spellcheck={false}
        autocomplete="off"
        pattern="\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}"
        title="YYYY-MM-DD HH:MM, 24-hour clock"
        aria-invalid={error?.field === name || undefined}
        aria-describedby={error?.field === name ? 'custom-range-error' : undefined}
      />
    </label>
  );
  return (
    <form class="group custom-range" onSubmit={submit} aria-label="Custom range" noValidate>
      {field('from', 'From', range.from)}
      {field('to', 'To', range.to)}
      <span class="muted">{timeZone}</span>
      <button type="submit" class="primary">
        Apply
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {error && (
        <span class="error-text" role="alert" id="custom-range-error">
          {error.message}
        </span>
      )}
    </form>
  );
}

export function TimeControls({
  view,
  range,
  granularity,
  wanted,
  granularities,
  timeZone,
  setView,
  shift,
  refreshNow,
}: ToolbarProps) {
  const span = range.to - range.from;
  const buckets = (g: string) => Math.ceil(span / (spanMs(g) ?? span));
  return (
    <>
      <div class="presets" role="group" aria-label="Time range">
        {PRESETS.map((p) => (
          <button
            key={p}
            type="button"
            aria-pressed={view.preset === p}
            onClick={() => setView({ ...view, preset: p, from: null, to: null })}
          >
            {p}
          </button>
        ))}
      </div>
      <CustomRange
        range={range}
        timeZone={timeZone}
        apply={(from, to) => setView({ ...view, preset: null, from, to })}
      />
      <span class="group range-group">
        <button type="button" class="icon" aria-label="Back by one window" onClick={() => shift(-1)}>
          ◀
        </button>
        <span
          class="range-label"
          data-testid="range-label"
          title={`${isoSeconds(range.from)} – ${isoSeconds(range.to)} (${timeZone})`}
        >
          {formatInZone(range.from, timeZone)} – {formatInZone(range.to, timeZone)}
        </span>
        <span class="range-label range-zone">{timeZone}</span>
        <button type="button" class="icon" aria-label="Forward by one window" onClick={() => shift(1)}>
          ▶
        </button>
      </span>
      <label>
        <span class="muted">Granularity</span>
        <select
          name="granularity"
          value={granularity}
          onChange={(e) => setView({ ...view, granularity: (e.target as HTMLSelectElement).value })}
        >
          {granularities.map((g) => (
            <option key={g} value={g} disabled={buckets(g) > MAX_BUCKETS}>
              {g}
            </option>
          ))}
        </select>
      </label>
      {wanted && wanted !== granularity && (
        <span class="muted coarsened" role="status" data-testid="coarsened">
          Shown by {granularity}: {wanted} would be {buckets(wanted).toLocaleString('en')} points, more than{' '}
          {MAX_BUCKETS.toLocaleString('en')}. Narrow the range to see {wanted}.
        </span>
      )}
      <label>
        <span class="muted">Refresh</span>
        <select
          name="refresh"
          value={view.refresh}
          onChange={(e) => setView({ ...view, refresh: (e.target as HTMLSelectElement).value })}
        >
          {REFRESH.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      {refreshNow && (
        <button type="button" class="icon" aria-label="Refresh now" title="Refresh now" onClick={refreshNow}>
          ↻
        </button>
      )}
    </>
  );
}

/** The value a segment shows: the URL's, else its default, else the first item marked default. */
export function segmentValue(segment: Segment, values: Record<string, string>): string {
  const fromUrl = values[segment.name];
  if (fromUrl !== undefined) return fromUrl;
  if (segment.default_value) return segment.default_value;
  const items = (segment.groups ?? []).flatMap((g) => g.items);
  return items.find((i) => i.default)?.value ?? items[0]?.value ?? '';
}

export function SegmentInputs({
  segments,
  view,
  setView,
}: {
  segments: Segment[];
  view: ViewState;
  setView: (v: ViewState) => void;
}) {
  const set = (name: string, value: string) =>
    setView({ ...view, segments: { ...view.segments, [name]: value } });
  return (
    <>
      {segments.map((s) => (
        <label key={s.name}>
          <span class="muted">{s.label ?? s.name}</span>
          {s.type === 'select' ? (
            <select
              name={`segment-${s.name}`}
              value={segmentValue(s, view.segments)}
              onChange={(e) => set(s.name, (e.target as HTMLSelectElement).value)}
            >
              {(s.groups ?? []).map((g) => (
                <optgroup key={g.label} label={g.label}>
                  {g.items.map((i) => (
                    <option key={i.value} value={i.value}>
                      {i.label}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
          ) : (
            <input
              name={`segment-${s.name}`}
              placeholder={s.placeholder ?? ''}
              value={segmentValue(s, view.segments)}
              onChange={(e) => set(s.name, (e.target as HTMLInputElement).value)}
            />
          )}
        </label>
      ))}
    </>
  );
}

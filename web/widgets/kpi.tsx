// kpi: one number of a path over the range (sum/mean/min/max); `split` adds the change against the
// previous period of the same length, `goal` a progress bar to `goal_target`; `timeseries: true`
// adds a sparkline of the buckets.
import { useMemo } from 'preact/hooks';
import { Frame } from './frame';
import { drawable, flag } from './common';
import { kpiFigures, type KpiFigures } from './data/kpi';
import { formatCompact, formatExact, formatPercent } from './data/format';
import { seriesColorVar } from './colors';
import { Sparkline } from './sparkline';
import type { WidgetViewProps } from './types';

const FN_LABEL = { sum: 'Sum', mean: 'Mean', min: 'Min', max: 'Max' } as const;

export function KpiWidget({ widget, ctx }: WidgetViewProps) {
  const figures = useMemo(
    () => kpiFigures(widget, ctx.series, ctx.previous),
    [widget, ctx.series, ctx.previous],
  );
  const { state, message, paths } = drawable(figures.data);
  const ready = state === 'ready' && figures.entry !== null;
  const meta = ready ? `${FN_LABEL[figures.fn]} · ${figures.entry!.name}` : undefined;
  const size = widget.size === 's' || widget.size === 'l' ? widget.size : 'm';
  return (
    <Frame widget={widget} state={ready ? 'ready' : state} message={message} paths={paths} meta={meta}>
      <div class={`kpi kpi--${size}`}>
        <div class="kpi__value" title={formatExact(figures.value)} data-value={figures.value ?? ''}>
          {formatCompact(figures.value)}
        </div>
        {widget.subtype === 'split' && (
          <SplitLine
            figures={figures}
            showDiff={flag(widget.diff)}
            lowerIsBetter={flag(widget.lower_is_better)}
          />
        )}
        {widget.subtype === 'goal' && (
          <GoalBar
            figures={figures}
            invert={flag(widget.goal_invert)}
            bar={flag(widget.goal_progress, true)}
          />
        )}
        {flag(widget.timeseries) && widget.subtype !== 'goal' && figures.entry && (
          <Sparkline values={figures.entry.values} color={seriesColorVar(0, figures.entry.color)} />
        )}
      </div>
    </Frame>
  );
}

// The arrow gives the direction; the colour whether that is good news (`lower_is_better` for
// errors or latency, where a fall is green).
function SplitLine({
  figures,
  showDiff,
  lowerIsBetter,
}: {
  figures: KpiFigures;
  showDiff: boolean;
  lowerIsBetter: boolean;
}) {
  if (figures.previous === undefined)
    return <div class="kpi__split kpi__split--pending">previous period loading…</div>;
  const change = figures.change ?? null;
  const tone = change === null || change === 0 ? 'flat' : change > 0 ? 'up' : 'down';
  const arrow = tone === 'up' ? '▲' : tone === 'down' ? '▼' : '';
  const verdict = tone === 'flat' ? 'same' : (tone === 'up') !== lowerIsBetter ? 'better' : 'worse';
  return (
    <div
      class={`kpi__split kpi__split--${tone} kpi__split--${verdict}`}
      data-change={change ?? ''}
      data-verdict={verdict}
    >
      <span class="kpi__change">
        {arrow} {change === null ? 'no previous data' : formatPercent(change)}
      </span>
      {showDiff && figures.diff !== null && figures.diff !== undefined && (
        <span class="kpi__diff">
          {figures.diff > 0 ? '+' : figures.diff < 0 ? '−' : ''}
          {formatCompact(Math.abs(figures.diff))}
        </span>
      )}
      <span class="kpi__previous" title={formatExact(figures.previous)}>
        vs {formatCompact(figures.previous)} before
      </span>
    </div>
  );
}

// Trifle App draws the bar only with `goal_progress`; a payload without the field gets the bar.
function GoalBar({ figures, invert, bar }: { figures: KpiFigures; invert: boolean; bar: boolean }) {
  if (figures.target === null || figures.target === undefined)
    return <div class="kpi__goal kpi__goal--unset">no goal_target set</div>;
  const ratio = figures.progress ?? 0;
  const met = invert ? ratio <= 1 : ratio >= 1;
  const pct = Math.round(ratio * 100);
  return (
    <div class={`kpi__goal ${met ? 'kpi__goal--met' : ''}`} data-progress={ratio}>
      <div class="kpi__goal-text">
        <span>
          {pct} % of {formatCompact(figures.target)}
        </span>
        <span class="kpi__goal-target" title={formatExact(figures.target)}>
          goal {invert ? '≤' : ''} {formatCompact(figures.target)}
        </span>
      </div>
      {bar && (
        <div
          class="kpi__bar"
          role="progressbar"
          aria-label="Progress to the goal"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.min(100, Math.max(0, pct))}
        >
          <span style={{ width: `${Math.min(100, Math.max(0, ratio * 100))}%` }} />
        </div>
      )}
    </div>
  );
}

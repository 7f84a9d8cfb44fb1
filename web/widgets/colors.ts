// Series colours come from the shell's CSS custom properties (--series-1 … --series-8, a
// colour-blind-safe palette per theme). SVG and CSS use var() directly; canvas charts need the
// resolved values, read with getComputedStyle when a chart is (re)built, e.g. on a theme change.

export const PALETTE_SIZE = 8;

// Used only when the shell's stylesheet is absent (tests, a bare harness): Okabe–Ito based.
const FALLBACK = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00', '#f0e442', '#7f7f7f'];

/** CSS for the `n`-th rotating series colour (0-based) or a row's own colour. */
export function seriesColorVar(index: number, own: string | null = null): string {
  const slot = own?.startsWith('palette:') ? Number(own.slice(8)) : null;
  if (own && slot === null) return own;
  const i = (((slot ?? index) % PALETTE_SIZE) + PALETTE_SIZE) % PALETTE_SIZE;
  return `var(--series-${i + 1}, ${FALLBACK[i]})`;
}

let probe: CanvasRenderingContext2D | null = null;

/** Resolves a `var(--x, fallback)` colour to a concrete value for canvas, as `#rrggbb` when it can. */
export function resolveColor(el: Element, css: string): string {
  const match = /^var\((--[\w-]+),\s*(.+)\)$/.exec(css);
  const value = match ? getComputedStyle(el).getPropertyValue(match[1]!).trim() || match[2]!.trim() : css;
  // The canvas normalises any colour it understands (names, rgb(), hsl()) to #rrggbb, which
  // withAlpha can then make translucent.
  probe ??= document.createElement('canvas').getContext('2d');
  if (!probe) return value;
  probe.fillStyle = '#000000';
  probe.fillStyle = value;
  return String(probe.fillStyle);
}

/** A theme token (`--fg`, `--muted`, `--border` …) resolved for canvas, with a fallback. */
export function token(el: Element, name: string, fallback: string): string {
  return getComputedStyle(el).getPropertyValue(name).trim() || fallback;
}

/** `color` with alpha, for canvas fills (accepts #rgb, #rrggbb and rgb()/hsl() as given). */
export function withAlpha(color: string, alpha: number): string {
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim());
  if (!hex) return `color-mix(in srgb, ${color} ${Math.round(alpha * 100)}%, transparent)`;
  const h = hex[1]!.length === 3 ? [...hex[1]!].map((c) => c + c).join('') : hex[1]!;
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

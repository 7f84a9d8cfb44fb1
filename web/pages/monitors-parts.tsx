// Small pieces the monitor and channel pages share: the state badge, a modal dialog (focus moves in,
// Escape closes it, focus returns to the control that opened it), times and values as people read them.
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { STATE_LABELS, type ShownState } from '../lib/monitors';
import { formatExact } from '../widgets/data/format';

export function StateBadge({ state, title }: { state: ShownState; title?: string }) {
  return (
    <span class={`state state--${state}`} data-state={state} title={title}>
      {STATE_LABELS[state]}
    </span>
  );
}

/** A modal <dialog>: opens on mount; Escape, the close button or `onClose` end it. */
export function Dialog({
  title,
  onClose,
  children,
  wide,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // Shown and focused as it is drawn (a layout effect), not a frame later: until then the dialog was
  // hidden, a field chosen meanwhile (a click on a loaded machine, Playwright's fill) could not take
  // the focus, and the first field took it when the dialog showed, with what was typed next.
  useLayoutEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    dialog
      ?.querySelector<HTMLElement>('input:not([type=hidden]), select, textarea, button:not(.dialog__close)')
      ?.focus();
    return () => {
      // Closing first lets the browser hand focus back; the opener gets it only when the focus went
      // away with the dialog, at once and never a frame later, when it would take it from a control
      // chosen meanwhile.
      if (dialog?.open) dialog.close();
      const active = document.activeElement;
      const gone = !active || active === document.body || Boolean(dialog?.contains(active));
      if (gone && opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={`dialog${wide ? ' dialog--wide' : ''}`}
      aria-label={title}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <header class="dialog__head">
        <h2>{title}</h2>
        <button type="button" class="icon dialog__close" aria-label="Close" onClick={onClose}>
          ✕
        </button>
      </header>
      {children}
    </dialog>
  );
}

/** An instant as local date and time: "27 Nov 2026, 14:05". */
export function formatWhen(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '–';
  const ms = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(ms)) return String(iso);
  return new Date(ms).toLocaleString('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
}

/** How long ago: "3 min ago", "2 h ago", "4 d ago". */
export function formatAgo(iso: string | null | undefined, now = Date.now()): string {
  const ms = iso ? Date.parse(iso) : NaN;
  if (!Number.isFinite(ms)) return '';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export const formatValue = (v: number | null | undefined) => formatExact(v ?? null);

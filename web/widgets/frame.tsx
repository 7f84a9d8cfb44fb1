// The one root element every widget renders: class="widget", data-widget-id, data-widget-type and
// data-state (loading | ready | empty | error), which the shell's and demo's tests select on; a
// title; and the shared skeleton, empty and error bodies, so every widget says the same things.
import type { ComponentChildren } from 'preact';
import type { WidgetConfig } from './types';

export type WidgetState = 'loading' | 'ready' | 'empty' | 'error';

interface FrameProps {
  widget: WidgetConfig;
  state: WidgetState;
  /** error: what failed; ready: a warning shown under the content (a broken expression row) */
  message?: string | null;
  /** empty: the paths that had no data */
  paths?: string[];
  /** error: the heading of the notice (what could not be done); the message says why */
  heading?: string;
  /** small text beside the title (e.g. "sum over 24h") */
  meta?: ComponentChildren;
  children?: ComponentChildren;
}

export function Frame({ widget, state, message, heading, paths, meta, children }: FrameProps) {
  const title = typeof widget.title === 'string' ? widget.title : '';
  return (
    <section
      class={`widget widget--${widget.type}`}
      data-widget-id={widget.id}
      data-widget-type={widget.type}
      data-state={state}
      aria-busy={state === 'loading' ? 'true' : undefined}
      aria-label={title || undefined}
    >
      {(title || meta) && (
        <header class="widget__head">
          {title && (
            <h3 class="widget__title" title={title}>
              {title}
            </h3>
          )}
          {meta && (
            <span class="widget__meta" title={typeof meta === 'string' ? meta : undefined}>
              {meta}
            </span>
          )}
        </header>
      )}
      <div class="widget__body">{body(state, message, paths, children, heading)}</div>
    </section>
  );
}

function body(
  state: WidgetState,
  message: string | null | undefined,
  paths: string[] | undefined,
  children: ComponentChildren,
  heading = 'Could not draw this widget',
) {
  if (state === 'loading')
    return (
      <div class="widget__skeleton" aria-hidden="true">
        <span />
        <span />
        <span />
      </div>
    );
  if (state === 'error') {
    return (
      <div class="widget__notice widget__notice--error" role="alert">
        <strong>{heading}</strong>
        <span>{message || 'Unknown error'}</span>
      </div>
    );
  }
  if (state === 'empty') {
    return (
      <div class="widget__notice">
        <strong>No data in this range</strong>
        {paths && paths.length > 0 ? (
          <span>
            for{' '}
            {paths.map((p, i) => (
              <span key={p}>
                {i > 0 && ', '}
                <code>{p}</code>
              </span>
            ))}
          </span>
        ) : (
          <span>This widget has no path or series row.</span>
        )}
      </div>
    );
  }
  return (
    <>
      {children}
      {message && (
        <p class="widget__warning" role="note" title={message}>
          ⚠ {message}
        </p>
      )}
    </>
  );
}

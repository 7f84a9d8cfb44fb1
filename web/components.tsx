// Small controls shared by the pages.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** A button that asks once more in place before doing something destructive. */
export function ConfirmButton({ label, confirm, onConfirm, disabled }: { label: string; confirm: string; onConfirm: () => void; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="row">
      <button type="button" class="danger" onClick={() => { setAsking(false); onConfirm(); }}>
        {confirm}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A name shown as text, edited in place (Enter saves, Escape cancels). */
export function InlineRename({ value, label, onSave, disabled, children }: { value: string; label: string; onSave: (name: string) => void; disabled?: boolean; children?: ComponentChildren }) {
  const [editing, setEditing] = useState(false);
  if (!editing) {
    return (
      <>
        {children}
        <button type="button" disabled={disabled} onClick={() => setEditing(true)} aria-label={`Rename ${value}`}>
          Rename
        </button>
      </>
    );
  }
  const submit = (e: Event) => {
    e.preventDefault();
    const name = String(new FormData(e.target as HTMLFormElement).get('name')).trim();
    setEditing(false);
    if (name && name !== value) onSave(name);
  };
  return (
    <form class="row" onSubmit={submit}>
      <input name="name" aria-label={label} value={value} required maxLength={255} autoFocus onKeyDown={(e) => e.key === 'Escape' && setEditing(false)} />
      <button type="submit" class="primary">
        Save
      </button>
      <button type="button" onClick={() => setEditing(false)}>
        Cancel
      </button>
    </form>
  );
}

export function Skeleton({ lines = 3 }: { lines?: number }) {
  return (
    <div class="stack" aria-busy="true" aria-label="Loading">
      {Array.from({ length: lines }, (_, i) => (
        <div key={i} class="skeleton" style={{ height: '36px' }} />
      ))}
    </div>
  );
}

export function ErrorNotice({ message }: { message: string | null }) {
  return message ? (
    <div class="notice error" role="alert">
      {message}
    </div>
  ) : null;
}

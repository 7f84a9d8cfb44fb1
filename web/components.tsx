// Small controls shared by the pages.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** A button that asks once more in place before doing something destructive. */
export function ConfirmButton({
  label,
  confirm,
  onConfirm,
  disabled,
}: {
  label: string;
  confirm: string;
  onConfirm: () => void;
  disabled?: boolean;
}) {
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
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirm}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** The in-place rename form (Enter saves, Escape cancels); the caller shows it instead of the name. */
export function RenameForm({
  value,
  label,
  onSave,
  onClose,
}: {
  value: string;
  label: string;
  onSave: (name: string) => void;
  onClose: () => void;
}) {
  const submit = (e: Event) => {
    e.preventDefault();
    const name = String(new FormData(e.target as HTMLFormElement).get('name')).trim();
    onClose();
    if (name && name !== value) onSave(name);
  };
  return (
    <form class="row" onSubmit={submit} style={{ flex: 1 }}>
      <input
        name="name"
        aria-label={label}
        value={value}
        required
        maxLength={255}
        autoFocus
        onKeyDown={(e) => e.key === 'Escape' && onClose()}
      />
      <button type="submit" class="primary">
        Save
      </button>
      <button type="button" onClick={onClose}>
        Cancel
      </button>
    </form>
  );
}

export function Skeleton({ lines = 3 }: { lines?: number }) {
  return (
    <div class="stack" role="status" aria-busy="true" aria-label="Loading">
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

// The whole payload and segments as JSON. Saving PUTs them; the server's 422 errors are shown at
// their fields: each one names its line, and the first is selected in the text.
import { useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../lib/api';
import { lineOfField, prettyWithLines } from '../lib/json-lines';
import type { Dashboard } from '../lib/types';

interface FieldError {
  field: string;
  messages: string[];
  line: number | null;
}

function selectLine(textarea: HTMLTextAreaElement, line: number): void {
  const lines = textarea.value.split('\n');
  const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
  textarea.focus();
  textarea.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
  const lineHeight = textarea.scrollHeight / Math.max(lines.length, 1);
  textarea.scrollTop = Math.max(0, (line - 4) * lineHeight);
}

export function JsonEditor({
  dashboard,
  onSaved,
  onCancel,
}: {
  dashboard: Dashboard;
  onSaved: (d: Dashboard) => void;
  onCancel: () => void;
}) {
  const [text, setText] = useState(
    () => prettyWithLines({ payload: dashboard.payload, segments: dashboard.segments }).text,
  );
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);

  const save = async () => {
    setErrors([]);
    setMessage(null);
    let doc: { payload?: unknown; segments?: unknown };
    try {
      doc = JSON.parse(text) as typeof doc;
    } catch (err) {
      return setMessage(`Not valid JSON: ${(err as Error).message}`);
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc))
      return setMessage('The document must be an object with payload and segments.');
    try {
      onSaved(
        await api<Dashboard>('PUT', `/dashboards/${dashboard.id}`, {
          payload: doc.payload ?? {},
          segments: doc.segments ?? [],
          updated_at: dashboard.updated_at,
        }),
      );
    } catch (err) {
      const fields = err instanceof ApiError ? err.fields : {};
      if (Object.keys(fields).length === 0) return setMessage((err as Error).message);
      // Re-indent to the canonical form, so that every field has a known line.
      const pretty = prettyWithLines(doc);
      setText(pretty.text);
      const list = Object.entries(fields).map(([field, messages]) => ({
        field,
        messages,
        line: lineOfField(pretty.lines, field),
      }));
      setErrors(list);
      const first = list.find((e) => e.line !== null);
      if (first && area.current) {
        area.current.value = pretty.text;
        selectLine(area.current, first.line!);
      }
    }
  };

  return (
    <div class="stack json-editor">
      <h2>Payload and segments (JSON)</h2>
      <label class="field">
        <span class="visually-hidden">Dashboard JSON</span>
        <textarea
          ref={area}
          class="code"
          name="json"
          spellcheck={false}
          value={text}
          aria-invalid={errors.length > 0}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      {message && (
        <p class="error-text" role="alert">
          {message}
        </p>
      )}
      {errors.length > 0 && (
        <ul class="json-errors" role="alert" aria-label="Errors">
          {errors.map((e) => (
            <li key={e.field}>
              <button
                type="button"
                data-field={e.field}
                onClick={() => e.line && area.current && selectLine(area.current, e.line)}
              >
                {e.line ? `Line ${e.line} · ` : ''}
                <code>{e.field}</code>: {e.messages.join(', ')}
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="row">
        <button type="button" class="primary" onClick={() => void save()}>
          Save JSON
        </button>
        <button type="button" onClick={onCancel}>
          Close
        </button>
      </div>
    </div>
  );
}

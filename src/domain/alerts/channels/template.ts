// The JSON body of a webhook (docs/alerts-channels.md, "Body templates"). A template is a JSON
// value; every string in it (object keys excepted) may hold `{{field}}` placeholders:
//
//   "{{value}}"            a string that is one placeholder and nothing else is replaced by the
//                          field's JSON value (a number, null, an object for `instance`)
//   "CPU at {{value}} %"   a placeholder inside text is replaced by the field's text ("" for null)
//
// Fields: kind, title, message, state, previous_state, value, condition, since, duration,
// duration_ms, monitor.id, monitor.name, monitor.url, instance, instance.<label>, idempotency_key.
// Unknown names are refused when the channel is saved, so a typo never reaches a receiver.
import type { OutgoingNotification } from '../delivery-port';

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}$/;

export const TEMPLATE_FIELDS = [
  'kind',
  'title',
  'message',
  'state',
  'previous_state',
  'value',
  'condition',
  'since',
  'duration',
  'duration_ms',
  'monitor.id',
  'monitor.name',
  'monitor.url',
  'instance',
  'idempotency_key',
  'report',
] as const;

const KNOWN = new Set<string>(TEMPLATE_FIELDS);

/** Whether `name` is a field a template may name (`instance.<label>` for any label). */
export function knownField(name: string): boolean {
  return KNOWN.has(name) || /^instance\.[A-Za-z0-9_.-]+$/.test(name);
}

/** "2 h 10 m", "45 s", "3 d 4 h": the two largest units of a duration. */
export function humanDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const units: Array<[string, number]> = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n} ${unit}`);
  }
  return parts.slice(0, 2).join(' ') || '0 s';
}

/** "host=pve1, disk=sda" (the labels of an instance, in key order). */
export function instanceText(instance: Record<string, string>): string {
  return Object.keys(instance)
    .sort()
    .map((k) => `${k}=${instance[k]}`)
    .join(', ');
}

/** A field's JSON value (undefined for an unknown name). */
export function fieldValue(n: OutgoingNotification, name: string): unknown {
  switch (name) {
    case 'kind':
      return n.kind;
    case 'title':
      return n.title;
    case 'message':
      return n.message;
    case 'state':
      return n.state;
    case 'previous_state':
      return n.previousState;
    case 'value':
      return n.value;
    case 'condition':
      return n.condition;
    case 'since':
      return n.since;
    case 'duration':
      return humanDuration(n.durationMs);
    case 'duration_ms':
      return n.durationMs;
    case 'monitor.id':
      return n.monitor.id;
    case 'monitor.name':
      return n.monitor.name;
    case 'monitor.url':
      return n.monitor.url ?? null;
    case 'instance':
      return { ...n.instance };
    case 'idempotency_key':
      return n.idempotencyKey;
    case 'report':
      return n.report ?? null;
  }
  if (name.startsWith('instance.')) return n.instance[name.slice('instance.'.length)] ?? null;
  return undefined;
}

function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return instanceText(value as Record<string, string>);
  return String(value);
}

/** The template with the notification's fields in place. */
export function renderTemplate(template: unknown, n: OutgoingNotification): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE.exec(template);
    if (whole) return fieldValue(n, whole[1]!) ?? null;
    return template.replace(PLACEHOLDER, (_, name: string) => asText(fieldValue(n, name)));
  }
  if (Array.isArray(template)) return template.map((item) => renderTemplate(item, n));
  if (typeof template === 'object' && template !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(template)) out[key] = renderTemplate(value, n);
    return out;
  }
  return template;
}

/** The unknown placeholder names of a template (empty when every one is known). */
export function unknownFields(template: unknown): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      for (const match of value.matchAll(PLACEHOLDER)) if (!knownField(match[1]!)) found.add(match[1]!);
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(walk);
  };
  walk(template);
  return [...found];
}

/** The body of a webhook without a template or a preset: every field of the notification. */
export const DEFAULT_TEMPLATE = Object.freeze({
  kind: '{{kind}}',
  title: '{{title}}',
  message: '{{message}}',
  state: '{{state}}',
  previous_state: '{{previous_state}}',
  value: '{{value}}',
  condition: '{{condition}}',
  since: '{{since}}',
  duration_ms: '{{duration_ms}}',
  monitor: { id: '{{monitor.id}}', name: '{{monitor.name}}', url: '{{monitor.url}}' },
  instance: '{{instance}}',
  idempotency_key: '{{idempotency_key}}',
});

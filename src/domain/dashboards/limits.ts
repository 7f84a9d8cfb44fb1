// Size limits of a dashboard's documents (SPEC 6): `payload` and `segments` together at most
// 256 KiB of JSON, each nested at most 32 levels, at most 200 widgets in a grid (group children
// included). Depth is measured without recursion and before anything recursive (JSON.stringify,
// the widget checks) touches a document: a payload nested 5,000 levels deep used to overflow the
// stack and answer 500.
import { type ErrorBag } from './issues';

export const MAX_DOCUMENT_BYTES = 256 * 1024;
export const MAX_DOCUMENT_DEPTH = 32;
export const MAX_WIDGETS = 200;

export const DEPTH_MESSAGE = `must be nested at most ${MAX_DOCUMENT_DEPTH} levels deep`;

/** True when `value` nests at most `max` arrays/objects deep (`{}` is 1, `{"a":[1]}` is 2). */
export function depthWithin(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return false;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return true;
}

/** UTF-8 bytes of a value's JSON text. Only for values already known to be shallow (depthWithin). */
export function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}

/** Widgets in `payload.grid`, group children included (anything not a list counts as none). */
export function countWidgets(payload: unknown): number {
  if (typeof payload !== 'object' || payload === null) return 0;
  const grid = (payload as { grid?: unknown }).grid;
  if (!Array.isArray(grid)) return 0;
  let count = grid.length;
  for (const widget of grid) {
    const children = (widget as { children?: unknown } | null)?.children;
    if (Array.isArray(children)) count += children.length;
  }
  return count;
}

export interface Documents {
  payload?: unknown;
  segments?: unknown;
}

function sizeMessage(total: number): string {
  return `payload and segments together must be at most ${MAX_DOCUMENT_BYTES} bytes of JSON (got ${total})`;
}

/**
 * Checks the documents a request sent (depth was checked at the edge) before they are normalised,
 * so an oversized grid is not walked widget by widget. Returns false when they must not be.
 */
export function checkSentDocuments(sent: Documents, kept: Documents, bag: ErrorBag): boolean {
  const widgets = countWidgets(sent.payload);
  if (widgets > MAX_WIDGETS) {
    bag.add(
      'payload.grid',
      `must hold at most ${MAX_WIDGETS} widgets, group children included (got ${widgets})`,
    );
    return false;
  }
  return checkStoredSize(sent, kept, bag);
}

/**
 * The size rule on what would be stored: the sent documents plus the kept ones a PUT leaves as
 * they are. The error names the larger of the sent fields.
 */
export function checkStoredSize(sent: Documents, kept: Documents, bag: ErrorBag): boolean {
  const payloadBytes = jsonBytes(sent.payload ?? kept.payload);
  const segmentsBytes = jsonBytes(sent.segments ?? kept.segments);
  const total = payloadBytes + segmentsBytes;
  if (total <= MAX_DOCUMENT_BYTES) return true;
  const sentSegmentsLarger =
    sent.segments !== undefined && (sent.payload === undefined || segmentsBytes > payloadBytes);
  bag.add(sentSegmentsLarger ? 'segments' : 'payload', sizeMessage(total));
  return false;
}

// Segments (SPEC 10): the dashboard key is a pattern such as `shop::(?<country>[^:]+)::orders`;
// each segment's value replaces the capture group of its name, and unnamed groups take the values
// of the remaining segments in order. Pure string work (no RegExp is ever built from a key), shared by
// the interface (web/lib/segments.ts) and the share links' reads; tests: test/unit/web-segments.test.ts.

interface Group {
  /** index of the opening parenthesis */
  start: number;
  /** index just past the closing parenthesis */
  end: number;
  name: string | null;
}

/** Top-level capturing groups of a pattern (escapes, classes and non-capturing groups skipped). */
export function captureGroups(pattern: string): Group[] {
  const groups: Group[] = [];
  const stack: { start: number; name: string | null; capturing: boolean }[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') inClass = true;
    else if (ch === '(') {
      const named = /^\(\?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(pattern.slice(i));
      const capturing = pattern[i + 1] !== '?' || named !== null;
      stack.push({ start: i, name: named ? named[1]! : null, capturing });
    } else if (ch === ')') {
      const open = stack.pop();
      if (open && open.capturing && stack.every((g) => !g.capturing)) {
        groups.push({ start: open.start, end: i + 1, name: open.name });
      }
    }
  }
  return groups;
}

/** Does the key hold any capture group (so that it needs segment values)? */
export const hasSegments = (key: string): boolean => captureGroups(key).length > 0;

/**
 * The key with each capture group replaced by its segment's value: a named group by the value of
 * the segment with that name; unnamed groups by the values of the segments no named group used,
 * in the segments' order. A group without a value is left as written.
 */
export function substituteKey(key: string, segmentNames: string[], values: Record<string, string>): string {
  const groups = captureGroups(key);
  const named = new Set(groups.map((g) => g.name).filter((n): n is string => n !== null));
  const remaining = segmentNames.filter((name) => !named.has(name));
  let out = '';
  let last = 0;
  for (const group of groups) {
    const name = group.name ?? remaining.shift() ?? null;
    const value = name !== null ? values[name] : undefined;
    out +=
      key.slice(last, group.start) +
      (value !== undefined && value !== '' ? value : key.slice(group.start, group.end));
    last = group.end;
  }
  return out + key.slice(last);
}

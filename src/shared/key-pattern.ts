// A transponder's `key` (SPEC 15): the request's key exactly, or a regular expression when the key
// holds `^` or `$`. Patterns are bounded so that a read can never be stalled by one: at most
// MAX_PATTERN_LENGTH characters, no back-references, and no repeated group whose body can itself
// repeat or branch (`(a+)+`, `(a|aa)*`, `(\w*)*`), the shapes that backtrack catastrophically.
export const MAX_PATTERN_LENGTH = 255;

export const isPattern = (key: string): boolean => key.includes('^') || key.includes('$');

/** Why `pattern` is refused, or null when it is safe to run on every read. */
export function patternProblem(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return `must be at most ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(pattern, 'u');
  } catch (err) {
    return `is not a valid regular expression (${(err as Error).message})`;
  }
  // One frame per open group: whether its body repeats or branches.
  const stack: Array<{ risky: boolean }> = [{ risky: false }];
  let i = 0;
  const repeats = (at: number): boolean => {
    const c = pattern[at];
    if (c === '*' || c === '+') return true;
    if (c !== '{') return false;
    const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at));
    if (!m) return false;
    return m[2] !== undefined && (m[3] === '' || Number(m[3]) > 1) ? true : Number(m[1]) > 1;
  };
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9k]/.test(next)) return 'must not use back-references';
      i += 2;
    } else if (c === '[') {
      i += 1;
      if (pattern[i] === '^') i += 1;
      if (pattern[i] === ']') i += 1;
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
      i += 1;
    } else if (c === '(') {
      stack.push({ risky: false });
      i += 1;
    } else if (c === ')') {
      const frame = stack.pop() ?? { risky: false };
      if (stack.length === 0) stack.push({ risky: false });
      i += 1;
      if (repeats(i) && frame.risky)
        return 'must not repeat a group that itself repeats or branches (catastrophic backtracking)';
      if (frame.risky || repeats(i)) stack[stack.length - 1]!.risky = true;
    } else {
      if (c === '|' || repeats(i)) stack[stack.length - 1]!.risky = true;
      i += 1;
    }
  }
  return null;
}

const compiled = new Map<string, RegExp | null>();

/** Whether a transponder's key applies to a read of `key`. Throws when the pattern is refused. */
export function keyMatches(pattern: string, key: string): boolean {
  if (!isPattern(pattern)) return pattern === key;
  let re = compiled.get(pattern);
  if (re === undefined) {
    re = patternProblem(pattern) === null ? new RegExp(pattern, 'u') : null;
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  if (!re) throw new Error(`key pattern ${JSON.stringify(pattern)} is refused: ${patternProblem(pattern)}`);
  return re.test(key);
}

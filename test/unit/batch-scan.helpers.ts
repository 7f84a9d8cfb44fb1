// Batch bodies for the scanner's property test (batch-scan.test.ts), built as a small JSON tree so
// that every token's spelling (numbers, escapes, duplicate members, white space) is under control.
import fc from 'fast-check';
import { parseTimestamp } from '../../src/shared/time';

/** JSON as written: numbers and strings keep their exact text (a string's content between quotes). */
export type Json =
  | { num: string }
  | { str: string }
  | { lit: 'true' | 'false' | 'null' }
  | { obj: Array<[string, Json]> }
  | { arr: Json[] };

/** The body text, with gaps[i % gaps.length] of white space before the i-th token (and at the end). */
export function serialize(root: Json, gaps: readonly string[] = []): string {
  let gap = 0;
  const space = () => (gaps.length === 0 ? '' : gaps[gap++ % gaps.length]!);
  const write = (j: Json): string => {
    if ('num' in j) return space() + j.num;
    if ('str' in j) return `${space()}"${j.str}"`;
    if ('lit' in j) return space() + j.lit;
    if ('arr' in j) return `${space()}[${j.arr.map(write).join(`${space()},`)}${space()}]`;
    const members = j.obj.map(([name, value]) => `${space()}"${name}"${space()}:${write(value)}`);
    return `${space()}{${members.join(`${space()},`)}${space()}}`;
  };
  return write(root) + space();
}

const DIGITS = [...'0123456789'];
const digits = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...DIGITS), minLength, maxLength });
/** ASCII from the space to DEL but the quote and the backslash: what a string holds unescaped on the fast path */
const PLAIN = Array.from({ length: 96 }, (_, i) => String.fromCharCode(32 + i)).filter(
  (c) => c !== '"' && c !== '\\',
);
export const SYSTEM_KEY = '__system__key__';

export const plainKey = fc
  .oneof(
    { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom(...PLAIN), minLength: 1, maxLength: 20 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'orders',
        'bench.key.1',
        'a b',
        ' x ',
        'x'.repeat(255),
        '__system__key',
        `${SYSTEM_KEY} `,
      ),
    },
  )
  .filter((k) => k.trim() !== '' && k !== SYSTEM_KEY);

/** A values member name the scanner takes: no dot, no leading digit, not __proto__. */
export const plainName = fc
  .string({ unit: fc.constantFrom(...PLAIN.filter((c) => c !== '.')), minLength: 1, maxLength: 8 })
  .filter((n) => !/^[0-9]/.test(n) && n !== '__proto__');

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** RFC 3339 text, valid or not as the ranges allow (`wild` widens them past the valid ones). */
function timestamp(wild: boolean): fc.Arbitrary<string> {
  const w = wild ? 1 : 0;
  return fc
    .record({
      y: fc.oneof(fc.integer({ min: 1960, max: 2100 }), fc.integer({ min: 0, max: 9999 })),
      mo: fc.integer({ min: 1 - w, max: 12 + w }),
      d: fc.integer({ min: 1 - w, max: 31 + w }),
      h: fc.integer({ min: 0, max: 23 + w }),
      mi: fc.integer({ min: 0, max: 59 + w }),
      s: fc.integer({ min: 0, max: 59 + w }),
      sep: fc.constantFrom('T', 't', ' ', ...(wild ? ['_'] : [])),
      frac: fc.option(digits(1, 9 + w)),
      off: fc.oneof(
        fc.constantFrom('Z', 'z', ...(wild ? ['', 'UTC', 'Z ', '+0100', 'x'] : [])),
        fc
          .tuple(
            fc.constantFrom('+', '-'),
            fc.integer({ min: 0, max: 23 + w }),
            fc.integer({ min: 0, max: 59 + w }),
          )
          .map(([s, h, m]) => `${s}${pad(h, 2)}:${pad(m, 2)}`),
      ),
    })
    .map(
      ({ y, mo, d, h, mi, s, sep, frac, off }) =>
        `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}${sep}${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac === null ? '' : `.${frac}`}${off}`,
    );
}
export const plainTimestamp = timestamp(false).filter((t) => parseTimestamp(t) !== null);
export const wildTimestamp = timestamp(true);

/** JSON number text (finite ones but for a few `1e999`-like exponents). */
export const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (Object.is(x, -0) ? '-0' : String(x))),
  fc
    .tuple(
      fc.constantFrom('', '-'),
      fc.oneof(
        fc.constant('0'),
        fc.tuple(fc.constantFrom(...DIGITS.slice(1)), digits(0, 18)).map(([a, b]) => a + b),
      ),
      fc.option(digits(1, 20)),
      fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1, 3))),
    )
    .map(
      ([sign, int, frac, exp]) =>
        `${sign}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : exp.join('')}`,
    ),
  // small fractions and long zero runs: many digits after the point, few significant ones
  fc
    .tuple(
      fc.constantFrom('', '-'),
      fc.nat(30),
      fc.tuple(fc.constantFrom(...DIGITS.slice(1)), digits(0, 16)).map(([a, b]) => a + b),
      fc.nat(12),
      fc.constantFrom('', 'e5', 'E-7', 'e+22', 'e-30'),
    )
    .map(
      ([sign, zeros, significant, trailing, exp]) =>
        `${sign}0.${'0'.repeat(zeros)}${significant}${'0'.repeat(trailing)}${exp}`,
    ),
  fc.tuple(fc.integer({ min: 1, max: 999 }), fc.nat(25)).map(([n, zeros]) => `${n}${'0'.repeat(zeros)}`),
  fc.constantFrom(
    '-0',
    '-0.0',
    '0e0',
    '1e308',
    '1e-324',
    '5e-324',
    '2.2250738585072014e-308',
    '9007199254740993',
    '0.1',
    '0.30000000000000004',
    '1.7976931348623157e308',
    '123456789012345678901234567890',
    '1e23',
    '8.98846567431158e307',
    '1e-99999999999999999999',
    '12e0000000000000000000000000001',
    '0.1e-2147483648',
    '1e2147483648',
    '1E-2147483649',
  ),
);
export const plainNumber = numberText.filter((t) => Number.isFinite(Number(t)));

/** A values shape: members by name, null for a leaf. At least one leaf, since every object has a member. */
export interface Shape {
  members: Array<[string, Shape | null]>;
}
export const shape: fc.Arbitrary<Shape> = fc.letrec<{ node: Shape }>((tie) => ({
  node: fc.record({
    members: fc.uniqueArray(
      fc.tuple(
        plainName,
        fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.constant(null), tie('node')),
      ),
      { minLength: 1, maxLength: 5, selector: ([name]) => name },
    ),
  }),
})).node;

/** Objects of a shape, itself first. */
function nodesOf(s: Shape, out: Shape[] = []): Shape[] {
  out.push(s);
  for (const [, child] of s.members) if (child) nodesOf(child, out);
  return out;
}

/**
 * A shape close to `base` (one member dropped, added, renamed, or turned from leaf to object or
 * back), so that consecutive points share a prefix of names and then differ.
 */
function variant(base: Shape, how: string, at: number, name: string): Shape {
  const copy = structuredClone(base);
  const node = nodesOf(copy)[at % nodesOf(copy).length]!;
  const i = at % node.members.length;
  const member = node.members[i]!;
  if (node.members.some(([n]) => n === name)) return copy;
  if (how === 'drop') node.members.splice(i, 1);
  else if (how === 'add') node.members.push([name, null]);
  else if (how === 'rename') member[0] = name;
  else if (how === 'deepen') member[1] = { members: [[name, member[1]]] };
  else member[1] = null;
  return copy;
}

/** A shape and some close to it. */
const shapes = fc
  .tuple(
    shape,
    fc.array(fc.tuple(fc.constantFrom('drop', 'add', 'rename', 'deepen', 'flatten'), fc.nat(), plainName), {
      maxLength: 3,
    }),
  )
  .map(([base, changes]) =>
    [base, ...changes.map(([how, at, name]) => variant(base, how, at, name))].filter(
      (s) => leafCount(s) >= 1 && leafCount(s) <= 1000,
    ),
  );

export function leafCount(s: Shape): number {
  return s.members.reduce((n, [, child]) => n + (child === null ? 1 : leafCount(child)), 0);
}

/** The values object of a shape, its leaves the given number texts in order. */
export function fill(s: Shape, numbers: string[], next = { i: 0 }): Json {
  return {
    obj: s.members.map(([name, child]): [string, Json] => [
      name,
      child === null ? { num: numbers[next.i++]! } : fill(child, numbers, next),
    ]),
  };
}

const operation = fc.constantFrom<Json | undefined>(
  undefined,
  undefined,
  { str: 'track' },
  { str: 'assert' },
);
const untracked = fc.constantFrom<Json | undefined>(undefined, undefined, { lit: 'true' }, { lit: 'false' });

const MEMBERS = ['key', 'at', 'values', 'operation', 'untracked'];

/** One point with a key and shape from the batch's pools, its members in the batch's order or its own. */
function point(keys: string[], shapes: Shape[], order: string[]): fc.Arbitrary<Json> {
  return fc
    .record({
      key: fc.constantFrom(...keys),
      s: fc.constantFrom(...shapes),
      at: plainTimestamp,
      operation,
      untracked,
      own: fc.option(fc.shuffledSubarray(MEMBERS, { minLength: 5 }), { freq: 5 }),
    })
    .chain(({ key, s, at, operation, untracked, own }) =>
      fc.array(plainNumber, { minLength: leafCount(s), maxLength: leafCount(s) }).map((numbers): Json => {
        const members: Record<string, Json | undefined> = {
          key: { str: key },
          at: { str: at },
          values: fill(s, numbers),
          operation,
          untracked,
        };
        return {
          obj: (own ?? order)
            .filter((name) => members[name] !== undefined)
            .map((name): [string, Json] => [name, members[name]!]),
        };
      }),
    );
}

const space = fc.oneof(
  { weight: 8, arbitrary: fc.constant('') },
  {
    weight: 2,
    arbitrary: fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), minLength: 1, maxLength: 3 }),
  },
);
/** white space between tokens: none in half the bodies */
export const gaps = fc.oneof(fc.constant([]), fc.array(space, { minLength: 1, maxLength: 12 }));

/** The points of a valid batch the scanner takes: few keys and shapes, and mostly one member order, so all repeat. */
export const plainPoints = fc
  .tuple(
    fc.array(plainKey, { minLength: 1, maxLength: 4 }),
    shapes.filter((pool) => pool.length > 0),
    fc.shuffledSubarray(MEMBERS, { minLength: 5 }),
  )
  .chain(([keys, pool, order]) => fc.array(point(keys, pool, order), { minLength: 1, maxLength: 16 }));

export const body = (points: Json[]): Json => ({ obj: [['points', { arr: points }]] });

type Members = Array<[string, Json]>;
const pick = <T>(items: readonly T[], n: number): T => items[n % items.length]!;
const membersOf = (j: Json): Members => ('obj' in j ? j.obj : []);

/** Every object inside a values tree (itself first), for mutations of names and leaves. */
function objectsOf(values: Json, out: Members[] = []): Members[] {
  if (!('obj' in values)) return out;
  out.push(values.obj);
  for (const [, child] of values.obj) objectsOf(child, out);
  return out;
}

/** `depth` nested objects (values itself the first), the innermost holding one leaf. */
export function nested(depth: number): Json {
  let j: Json = { obj: [['v', { num: '1' }]] };
  for (let d = 1; d < depth; d++) j = { obj: [['n', j]] };
  return j;
}
export const leaves = (n: number): Json => ({
  obj: Array.from({ length: n }, (_, i): [string, Json] => [`l${i}`, { num: String(i) }]),
});

const ANY: Json[] = [
  { num: '1' },
  { str: 'x' },
  { lit: 'null' },
  { lit: 'true' },
  { arr: [{ obj: [['a', { arr: [] }]] }, { num: '-2.5e3' }] },
  { obj: [['k', { str: '}' }]] },
];
const BAD_KEYS: Json[] = [
  { num: '1' },
  { lit: 'null' },
  { str: '' },
  { str: '   ' },
  { str: SYSTEM_KEY },
  { str: 'x'.repeat(256) },
  { str: 'é' },
  { str: '\\u0041' },
  { str: 'a\\"b' },
  { str: '\t' },
  { arr: [] },
  { obj: [] },
  { str: 'k\u00a0' },
  { str: '\u2003' },
];
const BAD_ATS: Json[] = [
  { num: '1767571200000' },
  { lit: 'null' },
  { str: '' },
  { str: '2026-01-05T00:00:00\\u005a' },
  { str: '２026-01-05T00:00:00Z' },
  { str: '2026-01-05T00:00:00Z"' },
];
const BAD_VALUES: Json[] = [{ obj: [] }, { num: '1' }, { arr: [] }, { lit: 'null' }, { str: 'x' }];
const BAD_LEAVES: Json[] = [
  { str: '1' },
  { lit: 'true' },
  { lit: 'null' },
  { arr: [{ num: '1' }] },
  ...[
    '1e999',
    '-1e999',
    '01',
    '-',
    '1.',
    '.5',
    '+1',
    '0x10',
    'Infinity',
    'NaN',
    '1e',
    '--1',
    '1.5e+',
    '-01',
    '1E400',
    '1 2',
  ].map((num) => ({ num })),
];
const NAMES = [
  'a.b',
  '.',
  'a.',
  '1a',
  '0',
  '9',
  '__proto__',
  '',
  'é',
  'a\\u002eb',
  '\\n',
  'x\ty',
  'constructor',
  'toString',
  'hasOwnProperty',
  '-1',
  'count',
];
const OPERATIONS: Json[] = [
  { str: 'Track' },
  { str: '' },
  { num: '1' },
  { lit: 'null' },
  { lit: 'true' },
  { str: 'assert ' },
  { str: 'track' },
];
const UNTRACKED: Json[] = [{ str: 'true' }, { num: '0' }, { lit: 'null' }, { num: '1' }, { lit: 'false' }];
/** valid values a duplicated member may take instead of its first one */
const OTHER: Record<string, Json[]> = {
  key: [{ str: 'other' }, { str: 'orders' }],
  at: [{ str: '2026-01-05T10:00:00Z' }, { str: '2020-02-29T23:59:59.5+01:00' }],
  values: [leaves(2), nested(3)],
  operation: [{ str: 'track' }, { str: 'assert' }],
  untracked: [{ lit: 'true' }, { lit: 'false' }],
};
const NOT_POINTS: Json[] = [{ arr: [] }, { num: '1' }, { lit: 'null' }, { str: 'x' }, { obj: [] }];

function setMember(members: Members, name: string, value: Json | undefined): void {
  const i = members.findIndex(([n]) => n === name);
  if (value === undefined) {
    if (i >= 0) members.splice(i, 1);
  } else if (i >= 0) members[i] = [name, value];
  else members.push([name, value]);
}

/** Changes to a valid batch, most of which the generic path refuses (a: which point, b: which variant, time: a timestamp valid or not). */
export const MUTATIONS: Record<string, (points: Json[], a: number, b: number, time: string) => Json> = {
  key: (points, a, b) => (setMember(membersOf(pick(points, a)), 'key', pick(BAD_KEYS, b)), body(points)),
  at: (points, a, b) => (setMember(membersOf(pick(points, a)), 'at', pick(BAD_ATS, b)), body(points)),
  time: (points, a, _b, time) => (setMember(membersOf(pick(points, a)), 'at', { str: time }), body(points)), // Feb 30, 24:00, +24:00...
  missing: (points, a, b) => (
    setMember(membersOf(pick(points, a)), pick(['key', 'at', 'values'], b), undefined),
    body(points)
  ),
  values: (points, a, b) => (
    setMember(membersOf(pick(points, a)), 'values', pick(BAD_VALUES, b)),
    body(points)
  ),
  leaf: (points, a, b) => {
    const objects = objectsOf(membersOf(pick(points, a)).find(([n]) => n === 'values')![1]);
    const members = pick(objects, b);
    const i = members.findIndex(([, v]) => 'num' in v);
    if (i >= 0) members[i] = [members[i]![0], pick(BAD_LEAVES, b >> 3)];
    return body(points);
  },
  name: (points, a, b) => {
    const members = pick(objectsOf(membersOf(pick(points, a)).find(([n]) => n === 'values')![1]), b);
    const i = (b >> 2) % members.length;
    if (members.length > 0) members[i] = [pick(NAMES, b >> 4), members[i]![1]];
    return body(points);
  },
  duplicateName: (points, a, b) => {
    const members = pick(objectsOf(membersOf(pick(points, a)).find(([n]) => n === 'values')![1]), b);
    if (members.length === 0) return body(points);
    const [name, value] = pick(members, b >> 2);
    members.push([name, b & 16 ? value : 'num' in value ? { obj: [['x', { num: '1' }]] } : { num: '2' }]);
    return body(points);
  },
  emptyObject: (points, a, b) => {
    const members = pick(objectsOf(membersOf(pick(points, a)).find(([n]) => n === 'values')![1]), b);
    members.splice((b >> 2) % (members.length + 1), 0, [
      b & 2 ? 'zz' : 'zz_empty',
      b & 1 ? { obj: [] } : { obj: [['e', { obj: [] }]] },
    ]);
    return body(points);
  },
  deep: (points, a, b) => (
    setMember(membersOf(pick(points, a)), 'values', nested(pick([2, 31, 32, 33, 40], b))),
    body(points)
  ),
  manyLeaves: (points, a, b) => (
    setMember(membersOf(pick(points, a)), 'values', leaves(pick([999, 1000, 1001], b))),
    body(points)
  ),
  operation: (points, a, b) => (
    setMember(membersOf(pick(points, a)), 'operation', pick(OPERATIONS, b)),
    body(points)
  ),
  untracked: (points, a, b) => (
    setMember(membersOf(pick(points, a)), 'untracked', pick(UNTRACKED, b)),
    body(points)
  ),
  unknownMember: (points, a, b) => (
    membersOf(pick(points, a)).splice(b % 4, 0, [
      pick(['extra', 'Key', 'key ', 'tags', 'a', 'valuesx'], b >> 2),
      pick(ANY, b >> 5),
    ]),
    body(points)
  ),
  duplicateMember: (points, a, b) => {
    const members = membersOf(pick(points, a));
    const [name, value] = pick(members, b);
    members.push([name, b & 8 ? value : pick(OTHER[name] ?? ANY, b >> 4)]);
    return body(points);
  },
  notAnObject: (points, a, b) => ((points[a % points.length] = pick(NOT_POINTS, b)), body(points)),
  top: (points, _a, b) =>
    pick<() => Json>(
      [
        () => ({
          obj: [
            ['other', { num: '1' }],
            ['points', { arr: points }],
          ],
        }),
        () => ({
          obj: [
            ['points', { arr: points }],
            ['other', { lit: 'null' }],
          ],
        }),
        () => ({
          obj: [
            ['points', { arr: points }],
            ['points', { arr: points }],
          ],
        }),
        () => ({ obj: [['Points', { arr: points }]] }),
        () => ({ obj: [['points', { obj: [['a', points[0]!]] }]] }),
        () => ({ obj: [['points', { lit: 'null' }]] }),
        () => ({ obj: [['points', { arr: [] }]] }),
        () => ({ arr: [body(points)] }),
        () => ({ obj: [] }),
      ],
      b,
    )(),
};

// Dashboard segments (SPEC 6): `{id, name, label, type, placeholder, default_value, groups}` where a
// select segment holds `groups: [{id, label, items: [{id, label, value, default}]}]`.
// The server fills what a client may leave out: ids (UUIDs), `label` (= name for a segment, = value
// for an item, "" for a group), `type` ("select"), `placeholder` and `default_value` (null), and
// sets each item's `default` flag to `value == default_value`. Other fields are kept as sent.
// Errors are named by position: `segments[0].groups[1].items[2].value`.
import * as v from 'valibot';
import { newId } from '../../lib/ids';
import { ErrorBag, fieldPath } from './issues';

const MAX_TEXT = 255;
const text = v.string('must be a string');
const nullableText = v.nullable(v.string('must be a string or null'));
const id = v.optional(
  v.pipe(
    text,
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_TEXT, `must be at most ${MAX_TEXT} characters`),
  ),
  () => newId(),
);

const ITEM = v.looseObject(
  {
    id,
    label: v.optional(text),
    value: v.pipe(text, v.maxLength(MAX_TEXT, `must be at most ${MAX_TEXT} characters`)),
  },
  'must be an item object',
);
const GROUP = v.looseObject(
  {
    id,
    label: v.optional(text, ''),
    items: v.optional(v.array(ITEM, 'must be a list of items'), () => []),
  },
  'must be a group object',
);
const SEGMENT = v.looseObject(
  {
    id,
    name: v.pipe(
      text,
      v.check((s: string) => s.trim() !== '', 'must not be blank'),
      v.maxLength(MAX_TEXT, `must be at most ${MAX_TEXT} characters`),
    ),
    label: v.optional(text),
    type: v.optional(v.picklist(['select', 'text'], 'must be one of select, text'), 'select'),
    placeholder: v.optional(nullableText, null),
    default_value: v.optional(nullableText, null),
    groups: v.optional(v.array(GROUP, 'must be a list of groups'), () => []),
  },
  'must be a segment object',
);

type Segment = v.InferOutput<typeof SEGMENT>;
type Group = v.InferOutput<typeof GROUP>;

/** Checks the select rules of one well-formed segment and fills labels and default flags. */
function finishSegment(segment: Segment, field: string, bag: ErrorBag): Segment {
  const groups = segment.groups.map((group: Group) => ({
    ...group,
    items: group.items.map((item) => ({ ...item, label: item.label ?? item.value })),
  }));
  if (segment.type === 'text' && groups.length > 0)
    bag.add(`${field}.groups`, 'must be empty for a text segment');
  const values = new Set<string>();
  groups.forEach((group, g) =>
    group.items.forEach((item, i) => {
      const itemField = `${field}.groups[${g}].items[${i}].value`;
      if (values.has(item.value)) bag.add(itemField, 'must be unique in the segment');
      values.add(item.value);
    }),
  );
  const fallback = segment.default_value;
  if (fallback !== null && values.size > 0 && !values.has(fallback)) {
    bag.add(`${field}.default_value`, "must be the value of one of the segment's items");
  }
  const marked = groups.map((group) => ({
    ...group,
    items: group.items.map((item) => ({ ...item, default: fallback !== null && item.value === fallback })),
  }));
  return { ...segment, label: segment.label ?? segment.name, groups: marked };
}

/** Checks and fills a `segments` list. Problems go to `bag`. */
export function normalizeSegments(input: unknown, bag: ErrorBag): unknown[] {
  if (!Array.isArray(input)) {
    bag.add('segments', 'must be a list of segments');
    return [];
  }
  const names = new Set<string>();
  return input.map((raw, index) => {
    const field = fieldPath('segments', index);
    const result = v.safeParse(SEGMENT, raw, { abortEarly: false });
    if (!result.success) {
      bag.addIssues(field, result.issues);
      return raw;
    }
    const name = result.output.name;
    if (names.has(name)) bag.add(`${field}.name`, 'must be unique among the segments');
    names.add(name);
    return finishSegment(result.output, field, bag);
  });
}

// The usual line protocol body read into the write path's wire form in WebAssembly
// (docs/intake.md, "The line-protocol reader in WebAssembly"). Built by build-wasm.mjs into
// lp-reader.wasm.ts; read through line-wasm.ts, which holds the rules this file shares with the
// JavaScript reader (line-direct.ts): both read exactly the bodies that reader reads, and give
// the same wires, or decline (-1) and leave the body to it.
//
// What this reader declines besides what line-direct.ts declines: a byte outside ASCII anywhere,
// more than MAX_PAIRS lines (more than one wire), more than MAX_LINE_FIELDS fields on a line,
// more than MAX_LISTS field lists in a body, and a body the key table cannot take.
//
// A body is copied into `input`; lp_read reads it line by line: the series key (measurement and
// sorted tags, as written) is found by its bytes in a table of the keys seen before (keys repeat
// across requests: a sender's series), each field list by its names (with '.' read as '_', as the
// mapping spells them) among the body's lists, and every line becomes one pair point: its time and
// key and list numbers in `meta`, each field's value and 1 (sum and count), then each value again
// (last), in `values`. The caller makes the strings: a new key's text (and checks it), each list's
// names; and the values this reader does not compute (more than 15 digits, exponents), whose
// places it lists, through Number() as line-direct.ts does. It computes more values itself than
// line-direct.ts (any mantissa up to 2^53 with up to 22 decimals, where line-direct.ts stops at 15
// digits), each the correctly rounded value Number() gives.

typedef unsigned char u8;
typedef unsigned int u32;
typedef int i32;
typedef double f64;
typedef unsigned long long u64;

#define EXPORT(name) __attribute__((export_name(#name)))

/** The largest body read here (the caller sends larger ones to the JavaScript reader). */
#define INPUT_MAX (256 * 1024)
/** Pair points per body: one wire holds 10,000 points, two per line. */
#define MAX_PAIRS 5000
#define MAX_LINE_FIELDS 64
#define MAX_LISTS 64
#define MAX_LIST_NAMES 1024
/** Values of a body: three per field, a field at least four bytes ("a=1,"). */
#define MAX_VALUES (3 * INPUT_MAX / 4 + 3 * MAX_LINE_FIELDS)
/** Values this reader leaves to Number(): at most one per field. */
#define MAX_FIXUPS (INPUT_MAX / 4 + MAX_LINE_FIELDS)
/** Keys known across bodies (line-direct.ts MAX_KNOWN_KEYS); the table starts over when full. */
#define MAX_ENTRIES 100000
#define MAX_SLOTS 262144
#define FIRST_SLOTS 8192
#define POOL_MAX (8 * 1024 * 1024)

#define KEY_UNIT 16777216.0 /* model/point-wire.ts KEY_UNIT, 2^24 */
#define LIST_UNIT 4.0       /* LIST_UNIT */

static u8 input[INPUT_MAX + 1]; /* and the sentinel */
static f64 meta[MAX_PAIRS * 2];
static f64 values[MAX_VALUES];
static u32 nvalues;
static u32 npairs;

/** the body's keys in the order of their first line: entry ids (the wire's key numbers are the places here) */
static u32 body_keys[MAX_PAIRS];
static u32 nkeys;

/** the body's field lists: per list its first name and count; per name its place in the body */
static u32 list_first[MAX_LISTS];
static u32 list_count[MAX_LISTS];
static u32 name_at[MAX_LIST_NAMES];
static u32 name_len[MAX_LIST_NAMES];
static u32 nlists;
static u32 nnames;

/** values left to the caller: where each is in the body, and its two places in `values` */
static u32 fix_at[MAX_FIXUPS];
static u32 fix_len[MAX_FIXUPS];
static u32 fix_first[MAX_FIXUPS];
static u32 fix_second[MAX_FIXUPS];
static u32 nfixups;

/** known keys: open addressing (entry id + 1, 0 free) at most half full; a slot and an entry each one piece of memory */
struct slot {
  u32 id1;
  u32 hash;
};
static struct slot slots[MAX_SLOTS];
static u32 capacity = FIRST_SLOTS;
/**
 * per entry: its bytes in `pool`, its length, hash and slot, the body it was last placed in and its
 * place there, and where its key was in the body that made it (the caller reads `at` and `len`)
 */
struct entry {
  u32 pool;
  u32 len;
  u32 hash;
  u32 slot;
  u32 stamp;
  u32 place;
  u32 at;
  u32 unused;
};
#define ENTRY_WORDS 8
static struct entry entries[MAX_ENTRIES];
static u32 nentries;
static u32 first_new;
/** counts the times the table started over: the caller's strings by entry id are then stale */
static u32 epoch;
static u8 pool[POOL_MAX];
static u32 pool_used;
static u32 pool_at_start;
static u32 stamp;

static const f64 POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                              1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
/** 2^53: every integer up to it is a double */
#define MAX_EXACT 9007199254740992ull

/** per precision (ns, us, ms, s, m, h): digits dropped, and the factor of what is kept */
static const u32 DROPPED[6] = {6, 3, 0, 0, 0, 0};
static const f64 FACTOR[6] = {1, 1, 1, 1000, 60000, 3600000};

EXPORT(lp_input) u8 *lp_input(void) { return input; }
EXPORT(lp_input_max) u32 lp_input_max(void) { return INPUT_MAX; }
EXPORT(lp_meta) f64 *lp_meta(void) { return meta; }
EXPORT(lp_values) f64 *lp_values(void) { return values; }
EXPORT(lp_values_count) u32 lp_values_count(void) { return nvalues; }
EXPORT(lp_body_keys) u32 *lp_body_keys(void) { return body_keys; }
EXPORT(lp_keys_count) u32 lp_keys_count(void) { return nkeys; }
EXPORT(lp_first_new) u32 lp_first_new(void) { return first_new; }
EXPORT(lp_entries) u32 lp_entries(void) { return nentries; }
EXPORT(lp_entry_at) u32 *lp_entry_at(void) { return &entries[0].at; }
EXPORT(lp_entry_len) u32 *lp_entry_len(void) { return &entries[0].len; }
EXPORT(lp_entry_words) u32 lp_entry_words(void) { return ENTRY_WORDS; }
EXPORT(lp_epoch) u32 lp_epoch(void) { return epoch; }
EXPORT(lp_lists_count) u32 lp_lists_count(void) { return nlists; }
EXPORT(lp_list_first) u32 *lp_list_first(void) { return list_first; }
EXPORT(lp_list_count) u32 *lp_list_count(void) { return list_count; }
EXPORT(lp_name_at) u32 *lp_name_at(void) { return name_at; }
EXPORT(lp_name_len) u32 *lp_name_len(void) { return name_len; }
EXPORT(lp_fixups_count) u32 lp_fixups_count(void) { return nfixups; }
EXPORT(lp_fix_at) u32 *lp_fix_at(void) { return fix_at; }
EXPORT(lp_fix_len) u32 *lp_fix_len(void) { return fix_len; }
EXPORT(lp_fix_first) u32 *lp_fix_first(void) { return fix_first; }
EXPORT(lp_fix_second) u32 *lp_fix_second(void) { return fix_second; }

/** Set once by the caller from a random number: keys made to pile up in one place of the table cannot be
 * chosen without it. */
static u32 seed;

EXPORT(lp_seed) void lp_seed(u32 value) { seed = value; }

static u32 hash_of(u32 from, u32 to) {
  u32 h = 2166136261u ^ seed;
  for (u32 i = from; i < to; i++) h = (h ^ input[i]) * 16777619u;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  return h;
}

static void place(u32 id) {
  u32 mask = capacity - 1;
  u32 i = entries[id].hash & mask;
  while (slots[i].id1 != 0) i = (i + 1) & mask;
  slots[i].id1 = id + 1;
  slots[i].hash = entries[id].hash;
  entries[id].slot = i;
}

static void clear_slots(void) {
  for (u32 i = 0; i < capacity; i++) slots[i].id1 = 0;
}

/** The entry of the key input[from, to) hashed `h`, made on first sight; -1 when the table is full. */
static i32 entry_of(u32 from, u32 to, u32 h) {
  u32 len = to - from;
  u32 mask = capacity - 1;
  u32 i = h & mask;
  for (u32 id1 = slots[i].id1; id1 != 0; id1 = slots[i].id1) {
    if (slots[i].hash == h && entries[id1 - 1].len == len) {
      const u8 *a = pool + entries[id1 - 1].pool;
      const u8 *b = input + from;
      u32 k = 0;
      while (k < len && a[k] == b[k]) k++;
      if (k == len) return (i32)(id1 - 1);
    }
    i = (i + 1) & mask;
  }
  if (nentries >= MAX_ENTRIES || pool_used + len > POOL_MAX) return -1;
  u32 id = nentries++;
  entries[id].pool = pool_used;
  for (u32 k = 0; k < len; k++) pool[pool_used + k] = input[from + k];
  pool_used += len;
  entries[id].len = len;
  entries[id].hash = h;
  entries[id].stamp = 0;
  entries[id].at = from;
  if (2 * nentries > capacity && capacity < MAX_SLOTS) {
    // twice the room: every entry placed again, in the order they were made
    clear_slots();
    capacity *= 2;
    clear_slots();
    for (u32 e = 0; e < nentries; e++) place(e);
  } else {
    place(id);
  }
  return (i32)id;
}

/** Forgets the entries the last read made (the caller refused one of them, or the read declined). */
EXPORT(lp_rollback) void lp_rollback(void) {
  // entries are placed in the order they were made, so clearing the newest ones breaks no older chain
  for (u32 id = first_new; id < nentries; id++) slots[entries[id].slot].id1 = 0;
  nentries = first_new;
  pool_used = pool_at_start;
}

/** Whether input[a0, a1) sorts strictly before input[b0, b1) (tags in ascending order of their keys). */
static i32 before(u32 a0, u32 a1, u32 b0, u32 b1) {
  u32 la = a1 - a0;
  u32 lb = b1 - b0;
  u32 n = la < lb ? la : lb;
  for (u32 i = 0; i < n; i++) {
    u8 x = input[a0 + i];
    u8 y = input[b0 + i];
    if (x != y) return x < y;
  }
  return la < lb;
}

/** The digits input[from, to) when there are 1 to 15 of them. */
static i32 digits_value(u32 from, u32 to, f64 *out) {
  if (to <= from || to - from > 15) return 0;
  f64 value = 0;
  for (u32 i = from; i < to; i++) {
    u8 c = input[i];
    if (c < '0' || c > '9') return 0;
    value = value * 10 + (c - '0');
  }
  *out = value;
  return 1;
}

static i32 same_text(u32 from, u32 to, const char *text) {
  u32 i = 0;
  for (; from + i < to; i++)
    if (text[i] == 0 || (u8)text[i] != input[from + i]) return 0;
  return text[i] == 0;
}

/** Whether input[from, to) is [+-]?(digits.?digits*|.digits)([eE][+-]?digits)?: what Number() reads here. */
static i32 float_form(u32 from, u32 to) {
  u32 i = from;
  if (i < to && (input[i] == '+' || input[i] == '-')) i++;
  u32 before_dot = 0;
  u32 after_dot = 0;
  while (i < to && input[i] >= '0' && input[i] <= '9') i++, before_dot++;
  if (i < to && input[i] == '.') {
    i++;
    while (i < to && input[i] >= '0' && input[i] <= '9') i++, after_dot++;
  }
  if (before_dot == 0 && after_dot == 0) return 0;
  if (i < to && (input[i] == 'e' || input[i] == 'E')) {
    i++;
    if (i < to && (input[i] == '+' || input[i] == '-')) i++;
    u32 exponent = 0;
    while (i < to && input[i] >= '0' && input[i] <= '9') i++, exponent++;
    if (exponent == 0) return 0;
  }
  return i == to;
}

/** A field's value as line-direct.ts fieldValue reads it: 1 read, 2 left to Number(), 0 declined. */
static i32 field_value(u32 from, u32 to, f64 *out) {
  u8 last = input[to - 1];
  u8 first = input[from];
  if (last == 'i' || last == 'u') {
    u32 start = from;
    i32 negative = first == '-';
    if (last == 'i' && (negative || first == '+')) start++;
    f64 value;
    if (!digits_value(start, to - 1, &value)) return 0;
    *out = negative ? -value : value;
    return 1;
  }
  if (first == 't' || first == 'T' || first == 'f' || first == 'F') {
    if (same_text(from, to, "t") || same_text(from, to, "T") || same_text(from, to, "true") ||
        same_text(from, to, "True") || same_text(from, to, "TRUE")) {
      *out = 1;
      return 1;
    }
    if (same_text(from, to, "f") || same_text(from, to, "F") || same_text(from, to, "false") ||
        same_text(from, to, "False") || same_text(from, to, "FALSE")) {
      *out = 0;
      return 1;
    }
    return 0;
  }
  u32 i = from;
  i32 negative = first == '-';
  if (negative || first == '+') i++;
  u64 mantissa = 0;
  i32 digits = 0;
  i32 fraction = -1;
  for (; i < to; i++) {
    u8 c = input[i];
    if (c >= '0' && c <= '9') {
      if (digits < 19) mantissa = mantissa * 10 + (c - '0');
      digits++;
      if (fraction >= 0) fraction++;
    } else if (c == '.' && fraction < 0)
      fraction = 0;
    else
      break;
  }
  // Clinger's fast path: m and 10^k both exact doubles (m <= 2^53, k <= 22), so m / 10^k is the
  // correctly rounded value of the decimal, which is what Number() gives
  if (i == to && digits > 0 && digits <= 19 && mantissa <= MAX_EXACT && fraction <= 22) {
    f64 value = fraction > 0 ? (f64)mantissa / POW10[fraction] : (f64)mantissa;
    *out = negative ? -value : value;
    return 1;
  }
  return float_form(from, to) ? 2 : 0;
}

/** A timestamp in milliseconds as line-direct.ts timestampMs computes it, or -1. */
static f64 timestamp_ms(u32 from, u32 to, i32 precision) {
  u32 length = to - from;
  if (length > 19) return -1;
  if (length == 19 && input[from] == '9') {
    // past int64 (9223372036854775807) is refused
    const char *max = "9223372036854775807";
    for (u32 i = 0; i < 19; i++) {
      u8 c = input[from + i];
      if (c != (u8)max[i]) {
        if (c > (u8)max[i]) return -1;
        break;
      }
    }
  }
  u32 drop = DROPPED[precision];
  if (drop == 0) {
    f64 value;
    if (!digits_value(from, to, &value)) return -1;
    return value * FACTOR[precision];
  }
  i32 kept = (i32)length - (i32)drop;
  if (kept > 15) return -1;
  f64 value = 0;
  u32 i = from;
  for (; (i32)(i - from) < kept; i++) {
    u8 c = input[i];
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  for (; i < to; i++) {
    u8 c = input[i];
    if (c < '0' || c > '9') return -1;
  }
  return kept > 0 ? value : to > from ? 0 : -1;
}

/** Whether two names are the same once '.' is read as '_' (mapping.ts fieldSegment). */
static i32 same_segment(u32 a, u32 la, u32 b, u32 lb) {
  if (la != lb) return 0;
  for (u32 i = 0; i < la; i++) {
    u8 x = input[a + i];
    u8 y = input[b + i];
    if (x == '.') x = '_';
    if (y == '.') y = '_';
    if (x != y) return 0;
  }
  return 1;
}

/** Whether the line's names are list `list`'s, byte for byte (as written). */
static i32 same_names(u32 list, const u32 *at, const u32 *len, u32 count) {
  if (list_count[list] != count) return 0;
  u32 first = list_first[list];
  for (u32 n = 0; n < count; n++) {
    u32 a = name_at[first + n];
    u32 l = name_len[first + n];
    if (l != len[n]) return 0;
    u32 b = at[n];
    for (u32 i = 0; i < l; i++)
      if (input[a + i] != input[b + i]) return 0;
  }
  return 1;
}

/** Whether the line's names spell list `list`'s once mapped (fieldSegment). */
static i32 same_segments(u32 list, const u32 *at, const u32 *len, u32 count) {
  if (list_count[list] != count) return 0;
  u32 first = list_first[list];
  for (u32 n = 0; n < count; n++)
    if (!same_segment(name_at[first + n], name_len[first + n], at[n], len[n])) return 0;
  return 1;
}

/** What a byte is to the scans: a line's end, a separator, or one this reader declines (outside ASCII, an escape, a quote, a tab, a carriage return). */
#define K_END 1
#define K_COMMA 2
#define K_SPACE 4
#define K_EQUALS 8
#define K_DECLINE 16
static u8 kind[256];
static i32 ready;

static void init(void) {
  for (u32 c = 128; c < 256; c++) kind[c] = K_DECLINE;
  kind['\\'] = K_DECLINE;
  kind['"'] = K_DECLINE;
  kind['\t'] = K_DECLINE;
  kind['\r'] = K_DECLINE;
  kind['\n'] = K_END;
  kind[','] = K_COMMA;
  kind[' '] = K_SPACE;
  kind['='] = K_EQUALS;
  ready = 1;
}

static u32 line_at[MAX_LINE_FIELDS];
static u32 line_len[MAX_LINE_FIELDS];
static f64 line_value[MAX_LINE_FIELDS];
static u8 line_fix[MAX_LINE_FIELDS];
static u32 line_fix_at[MAX_LINE_FIELDS];
static u32 line_fix_len[MAX_LINE_FIELDS];

/**
 * Reads the body of `length` bytes in `input` (precision: 0-5 for ns, us, ms, s, m, h; lines
 * without a time at `now`; times outside [min_ms, max_ms] declined). Returns its lines (pair
 * points), or -1 when it declines the body (nothing of it is kept).
 */
EXPORT(lp_read) i32 lp_read(u32 length, i32 precision, f64 now, f64 min_ms, f64 max_ms, u32 max_line) {
  if (!ready) init();
  if (length > INPUT_MAX || precision < 0 || precision > 5) return -1;
  if (++stamp == 0) {
    for (u32 e = 0; e < nentries; e++) entries[e].stamp = 0;
    stamp = 1;
  }
  if (nentries + MAX_PAIRS > MAX_ENTRIES || pool_used + length > POOL_MAX) {
    // full: start over (as line-direct.ts does), the caller drops its strings by entry id
    clear_slots();
    nentries = 0;
    pool_used = 0;
    epoch++;
  }
  first_new = nentries;
  pool_at_start = pool_used;
  nvalues = 0;
  npairs = 0;
  nkeys = 0;
  nlists = 0;
  nnames = 0;
  nfixups = 0;
  i32 last_list = -1;
  input[length] = '\n'; // a sentinel: every scan below stops at a line's end without a bound check
  u32 pos = 0;
  while (pos < length) {
    u32 line_start = pos;
    u8 c = input[pos];
    if (c == '\n') {
      pos++;
      continue;
    }
    if (c == ' ' || c == '#') goto decline;
    // measurement (every byte of a line passes one of these scans, which decline the bytes this reader does not read)
    while (!(kind[input[pos]] & (K_COMMA | K_SPACE | K_END | K_DECLINE))) pos++;
    if (kind[input[pos]] & K_DECLINE) goto decline;
    if (pos == line_start) goto decline;
    // tags, in ascending order of their keys
    i32 has_last = 0;
    u32 last_key = 0;
    u32 last_key_end = 0;
    while (input[pos] == ',') {
      u32 key_start = ++pos;
      while (!(kind[input[pos]] & (K_COMMA | K_SPACE | K_EQUALS | K_END | K_DECLINE))) pos++;
      c = input[pos];
      if (kind[c] & K_DECLINE) goto decline;
      if (pos == key_start || c != '=') goto decline; // the line's end included
      if (has_last && !before(last_key, last_key_end, key_start, pos)) goto decline;
      has_last = 1;
      last_key = key_start;
      last_key_end = pos;
      u32 value_start = ++pos;
      while (!(kind[input[pos]] & (K_COMMA | K_SPACE | K_EQUALS | K_END | K_DECLINE))) pos++;
      c = input[pos];
      if (kind[c] & K_DECLINE) goto decline;
      if (pos == value_start || c == '=') goto decline;
    }
    u32 series_end = pos;
    if (input[pos] == '\n') goto decline; // no fields
    while (input[pos] == ' ') pos++;
    if (input[pos] == '\n') goto decline;
    // fields
    u32 count = 0;
    u32 fixes = 0;
    for (;;) {
      u32 name_start = pos;
      while (!(kind[input[pos]] & (K_COMMA | K_SPACE | K_EQUALS | K_END | K_DECLINE))) pos++;
      c = input[pos];
      if (kind[c] & K_DECLINE) goto decline;
      if (pos == name_start || c != '=') goto decline;
      u32 name_end = pos;
      u32 value_start = ++pos;
      while (!(kind[input[pos]] & (K_COMMA | K_SPACE | K_END | K_DECLINE))) pos++;
      c = input[pos];
      if (kind[c] & K_DECLINE) goto decline;
      if (pos == value_start) goto decline;
      if (count >= MAX_LINE_FIELDS) goto decline;
      f64 value = 0;
      i32 read = field_value(value_start, pos, &value);
      if (read == 0) goto decline;
      line_fix[count] = read == 2;
      if (read == 2) {
        line_fix_at[count] = value_start;
        line_fix_len[count] = pos - value_start;
        fixes++;
      }
      line_at[count] = name_start;
      line_len[count] = name_end - name_start;
      line_value[count] = value;
      count++;
      if (c == ',') {
        pos++;
        continue;
      }
      break;
    }
    // the optional timestamp
    while (input[pos] == ' ') pos++;
    f64 at_ms = now;
    if (input[pos] != '\n') {
      u32 time_start = pos;
      while (!(kind[input[pos]] & (K_SPACE | K_END | K_DECLINE))) pos++;
      if (kind[input[pos]] & K_DECLINE) goto decline;
      at_ms = timestamp_ms(time_start, pos, precision);
      if (at_ms < 0) goto decline;
      while (input[pos] == ' ') pos++;
      if (input[pos] != '\n') goto decline;
    }
    u32 line_end = pos;
    if (line_end - line_start > max_line) goto decline;
    if (!(at_ms >= min_ms && at_ms <= max_ms)) goto decline;
    // the field list: the line before's, else one of the body's with the same names once mapped, else a new one
    i32 list = -1;
    if (last_list >= 0 && same_names((u32)last_list, line_at, line_len, count)) list = last_list;
    else {
      for (u32 n = 0; n < count; n++) {
        u8 c0 = input[line_at[n]];
        if (c0 >= '0' && c0 <= '9') goto decline; // an array index: the mapping reorders those
        for (u32 m = 0; m < n; m++)
          if (same_segment(line_at[m], line_len[m], line_at[n], line_len[n])) goto decline; // repeated
      }
      for (u32 l = 0; l < nlists; l++)
        if (same_segments(l, line_at, line_len, count)) {
          list = (i32)l;
          break;
        }
      if (list < 0) {
        if (nlists >= MAX_LISTS || nnames + count > MAX_LIST_NAMES) goto decline;
        list = (i32)nlists++;
        list_first[list] = nnames;
        list_count[list] = count;
        for (u32 n = 0; n < count; n++) {
          name_at[nnames] = line_at[n];
          name_len[nnames] = line_len[n];
          nnames++;
        }
      }
    }
    last_list = list;
    // the key
    i32 id = entry_of(line_start, series_end, hash_of(line_start, series_end));
    if (id < 0) goto decline;
    if (entries[id].stamp != stamp) {
      entries[id].stamp = stamp;
      entries[id].place = nkeys;
      body_keys[nkeys++] = (u32)id;
    }
    // the pair point
    if (npairs >= MAX_PAIRS || nvalues + 3 * count > MAX_VALUES || nfixups + fixes > MAX_FIXUPS) goto decline;
    meta[2 * npairs] = at_ms;
    meta[2 * npairs + 1] = entries[id].place * KEY_UNIT + (u32)list * LIST_UNIT;
    npairs++;
    u32 v = nvalues;
    for (u32 n = 0; n < count; n++) {
      if (line_fix[n]) {
        fix_at[nfixups] = line_fix_at[n];
        fix_len[nfixups] = line_fix_len[n];
        fix_first[nfixups] = v + 2 * n;
        fix_second[nfixups] = v + 2 * count + n;
        nfixups++;
      }
      values[v + 2 * n] = line_value[n];
      values[v + 2 * n + 1] = 1;
      values[v + 2 * count + n] = line_value[n];
    }
    nvalues = v + 3 * count;
    pos = line_end + 1;
  }
  return (i32)npairs;
decline:
  lp_rollback();
  return -1;
}

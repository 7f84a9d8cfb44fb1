// A small structured logger: one JSON object per line on stderr (stdout carries only the
// `listening on` line), so logs stay greppable and machine-readable without a dependency.
// A `path` field is written with share-link tokens redacted (redactPath): no line carries one.
import type { LogLevel } from '../config';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Path segments after which a share link's token follows: the page `/s/<token>` and the API's `/api/v1/shared/<token>`. */
const TOKEN_BEFORE = new Set(['s', 'shared']);

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment).toLowerCase();
  } catch {
    return segment.toLowerCase();
  }
}

/**
 * A request path fit for a log line: the segment after `s` or `shared` (a share link's token, a
 * credential) becomes `<redacted>`, whatever the case or %-encoding the path was sent with.
 */
export function redactPath(path: string): string {
  const segments = path.split('/');
  let changed = false;
  for (let i = 0; i < segments.length - 1; i++) {
    if (!TOKEN_BEFORE.has(decoded(segments[i]!))) continue;
    let j = i + 1;
    while (j < segments.length - 1 && segments[j] === '') j++; // `/s//<token>`
    if (segments[j] !== '' && segments[j] !== '<redacted>') {
      segments[j] = '<redacted>';
      changed = true;
    }
  }
  return changed ? segments.join('/') : path;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const min = RANK[level];
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    const safe =
      fields && typeof fields.path === 'string' ? { ...fields, path: redactPath(fields.path) } : fields;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...safe })}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

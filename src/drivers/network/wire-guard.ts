// The relay every network store's client connects through: a listener on 127.0.0.1 (one per
// store) whose connections the relay carries to the source's server, after resolving the host and
// checking the address against network.outbound (outbound.ts) on every connection, dialing the
// checked address itself. What the server sends is checked frame by frame before the client
// library sees it: a frame length the protocol does not allow (the zero-length mongo frame that
// spins the mongodb driver, a 1 GB length, an HTTP answer, garbage) closes the connection at once,
// so no remote server can make a client library loop or buffer without bound.
//
// The relay also remembers what went wrong (the failure class setup answers with): the address
// refused by the policy, no connection, or a server that does not speak the protocol.
import net from 'node:net';
import { ANY_OUTBOUND, OutboundRefused, resolveOutbound, type NetworkPolicy } from '../../lib/outbound';

export type WireProtocol = 'postgres' | 'mysql' | 'redis' | 'mongo';

/** The largest frame a server may send (a 16 MB document or row and its envelope). */
export const MAX_FRAME_BYTES = 17 * 1024 * 1024;

/** What a connection through the relay came to. */
export type WireFailure = 'refused' | 'connect' | 'protocol';

/** Checks the bytes one direction of a connection carries. */
interface Checker {
  /** server bytes, in order: what may reach the client now, or null for a frame the protocol forbids */
  server(chunk: Buffer): Buffer | null;
  /** client bytes, in order (the TLS upgrade is announced by the client) */
  client(chunk: Buffer): void;
  /** at least one whole, valid frame came from the server */
  readonly confirmed: boolean;
}

/** A TLS record stream: content type 20..24, version 3.x, at most 2^14 + 2048 bytes a record. */
class TlsRecords {
  private readonly frames = new LengthFrames(5, (h) => {
    const length = h.readUInt16BE(3);
    return h[0]! < 20 || h[0]! > 24 || h[1] !== 3 || length > 16384 + 2048 ? -1 : length;
  });
  feed(chunk: Buffer): Buffer | null {
    return this.frames.feed(chunk);
  }
}

/** Frames of `headerBytes` whose header names the frame's whole length (or false: forbidden). */
class LengthFrames {
  private header = Buffer.alloc(0);
  private skip = 0;
  frames = 0;
  constructor(
    private readonly headerBytes: number,
    /** the bytes that follow the header, or -1 for a forbidden header */
    private readonly bodyBytes: (header: Buffer, index: number) => number,
    /** false: the start of a header is forbidden already (checked before the header is whole) */
    private readonly early: (partial: Buffer) => boolean = () => true,
  ) {}
  /** The bytes that may pass (a header only once it is whole and allowed), or null: forbidden. */
  feed(chunk: Buffer): Buffer | null {
    const out: Buffer[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        out.push(chunk.subarray(at, at + n));
        this.skip -= n;
        at += n;
        if (this.skip === 0) this.frames++;
        continue;
      }
      const need = this.headerBytes - this.header.length;
      this.header = Buffer.concat([this.header, chunk.subarray(at, at + need)]);
      at += Math.min(need, chunk.length - at);
      if (this.header.length < this.headerBytes) {
        if (!this.early(this.header)) return null;
        break;
      }
      const body = this.bodyBytes(this.header, this.frames);
      if (body < 0) return null;
      out.push(this.header);
      this.header = Buffer.alloc(0);
      this.skip = body;
      if (body === 0) this.frames++;
    }
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }
}

/** Backend message types of the PostgreSQL protocol (3.0). */
const PG_TYPES = new Set('RSKZTDCEN123ntsIAGHWcdVv'.split('').map((c) => c.charCodeAt(0)));

function postgresChecker(): Checker {
  let clientBytes = Buffer.alloc(0);
  let sslAsked: boolean | null = null; // null: the client's first message not seen yet
  let sslAnswered = false;
  let tls: TlsRecords | null = null;
  const frames = new LengthFrames(
    5,
    (h) => {
      const length = h.readInt32BE(1);
      return PG_TYPES.has(h[0]!) && length >= 4 && length <= MAX_FRAME_BYTES ? length - 4 : -1;
    },
    (partial) =>
      PG_TYPES.has(partial[0]!) && (partial.length < 3 || partial.readUInt16BE(1) <= MAX_FRAME_BYTES >>> 16),
  );
  return {
    get confirmed() {
      return frames.frames > 0 || tls !== null;
    },
    client(chunk) {
      if (sslAsked !== null) return;
      clientBytes = Buffer.concat([clientBytes, chunk]).subarray(0, 8);
      if (clientBytes.length < 8) return;
      const code = clientBytes.readInt32BE(4);
      sslAsked = clientBytes.readInt32BE(0) === 8 && (code === 80877103 || code === 80877104);
    },
    server(chunk) {
      if (tls) return tls.feed(chunk);
      if (sslAsked && !sslAnswered) {
        // The answer to SSLRequest is one byte: S (TLS follows), N (plain) or an error message.
        const answer = chunk[0];
        if (answer === 0x53 || answer === 0x4e || answer === 0x47) {
          sslAnswered = true;
          if (answer === 0x53) tls = new TlsRecords();
          const rest = (tls ?? frames).feed(chunk.subarray(1));
          return rest && Buffer.concat([chunk.subarray(0, 1), rest]);
        }
        sslAnswered = true;
      }
      return frames.feed(chunk);
    },
  };
}

function mysqlChecker(): Checker {
  let tls: TlsRecords | null = null;
  let clientPackets = 0;
  let clientHeader = Buffer.alloc(0);
  const frames = new LengthFrames(4, (h) => {
    const length = h.readUIntLE(0, 3);
    // no multi-packet payloads (0xFFFFFF, and the empty packet that ends one): a 16 MB row is more
    // than any bucket needs
    if (length === 0 || length >= 0xffffff || length > MAX_FRAME_BYTES) return -1;
    return length;
  });
  let greeting: boolean | null = null;
  let first = Buffer.alloc(0);
  return {
    get confirmed() {
      return greeting === true;
    },
    client(chunk) {
      if (tls || clientPackets > 0) return;
      clientHeader = Buffer.concat([clientHeader, chunk]).subarray(0, 4);
      if (clientHeader.length < 4) return;
      clientPackets++;
      // SSLRequest: a 32-byte payload with sequence 1, then TLS both ways.
      if (clientHeader.readUIntLE(0, 3) === 32 && clientHeader[3] === 1) tls = new TlsRecords();
    },
    server(chunk) {
      if (tls && greeting) return tls.feed(chunk);
      if (greeting === null) {
        // The greeting's payload starts with protocol version 10 (or 0xff, an error packet).
        first = Buffer.concat([first, chunk]).subarray(0, 5);
        if (first.length >= 5) {
          greeting = first[4] === 10 || first[4] === 0xff;
          if (!greeting) return null;
        }
      }
      return frames.feed(chunk);
    },
  };
}

/** Redis replies (RESP2/3): header lines of at most 64 KB, bulk lengths and counts bounded. */
function redisChecker(tlsFromStart: boolean): Checker {
  const tls = tlsFromStart ? new TlsRecords() : null;
  let line = '';
  let skip = 0;
  let replies = 0;
  const TYPES = '+-:$*_,#!=(%~>|';
  return {
    get confirmed() {
      return replies > 0 || tls !== null;
    },
    client() {},
    server(chunk) {
      if (tls) return tls.feed(chunk);
      const out: Buffer[] = [];
      let at = 0;
      while (at < chunk.length) {
        if (skip > 0) {
          const n = Math.min(skip, chunk.length - at);
          out.push(chunk.subarray(at, at + n));
          skip -= n;
          at += n;
          continue;
        }
        const end = chunk.indexOf(0x0a, at);
        const piece = chunk.toString('latin1', at, end < 0 ? chunk.length : end + 1);
        at = end < 0 ? chunk.length : end + 1;
        line += piece;
        if (line.length > 65_536) return null;
        if (line.length > 0 && !TYPES.includes(line[0]!)) return null;
        if (end < 0) break;
        if (!line.endsWith('\r\n')) return null;
        const type = line[0]!;
        const n = Number(line.slice(1, -2));
        if ('$=!'.includes(type)) {
          if (!Number.isInteger(n) || n < -1 || n > MAX_FRAME_BYTES) return null;
          if (n >= 0) skip = n + 2;
        } else if ('*%~>|'.includes(type)) {
          if (!Number.isInteger(n) || n < -1 || n > 1_000_000) return null;
        }
        out.push(Buffer.from(line, 'latin1'));
        replies++;
        line = '';
      }
      return Buffer.concat(out);
    },
  };
}

/** OP_MSG (2013), OP_REPLY (1) or OP_COMPRESSED (2012): length 16 (the header) .. MAX_FRAME_BYTES. */
function mongoChecker(): Checker {
  const frames = new LengthFrames(
    16,
    (h) => {
      const length = h.readInt32LE(0);
      const opCode = h.readInt32LE(12);
      if (length < 16 || length > MAX_FRAME_BYTES || (opCode !== 2013 && opCode !== 1 && opCode !== 2012))
        return -1;
      return length - 16;
    },
    (partial) =>
      partial.length < 4 || (partial.readInt32LE(0) >= 16 && partial.readInt32LE(0) <= MAX_FRAME_BYTES),
  );
  return {
    get confirmed() {
      return frames.frames > 0;
    },
    client() {},
    server: (chunk) => frames.feed(chunk),
  };
}

function checkerFor(protocol: WireProtocol, tls: boolean): Checker {
  switch (protocol) {
    case 'postgres':
      return postgresChecker();
    case 'mysql':
      return mysqlChecker();
    case 'redis':
      return redisChecker(tls);
    case 'mongo':
      return mongoChecker();
  }
}

export interface WireGuardOptions {
  protocol: WireProtocol;
  host: string;
  port: number;
  policy: NetworkPolicy;
  /** ms to resolve and connect */
  timeoutMs: number;
  /** redis over TLS from the first byte */
  tls?: boolean;
}

export interface WireGuard {
  /** the relay's port on 127.0.0.1 (the listener opens on first call) */
  port(): Promise<number>;
  /** the worst failure since the last reset(), and whether a server frame was valid */
  state(): { failure: WireFailure | null; confirmed: boolean };
  reset(): void;
  close(): Promise<void>;
}

const SEVERITY: Record<WireFailure, number> = { connect: 1, protocol: 2, refused: 3 };

/**
 * The relay of one source: to the host and port parsed from its fields (connectionTarget), under the
 * service's policy (every address when none is given: the stores' own tests).
 */
export function guardFor(
  protocol: WireProtocol,
  target: { host: string; port: number; ssl?: boolean },
  settings: { policy?: NetworkPolicy },
  timeoutMs: number,
): WireGuard {
  return createWireGuard({
    protocol,
    host: target.host,
    port: target.port,
    policy: settings.policy ?? ANY_OUTBOUND,
    timeoutMs,
    ...(protocol === 'redis' && target.ssl ? { tls: true } : {}),
  });
}

export function createWireGuard(options: WireGuardOptions): WireGuard {
  let server: net.Server | null = null;
  let listening: Promise<number> | null = null;
  let failure: WireFailure | null = null;
  let confirmed = false;
  const open = new Set<net.Socket>();

  const fail = (what: WireFailure) => {
    if (failure === null || SEVERITY[what] > SEVERITY[failure]) failure = what;
  };

  function carry(local: net.Socket): void {
    open.add(local);
    local.pause();
    local.on('error', () => undefined);
    const checker = checkerFor(options.protocol, options.tls === true);
    let remote: net.Socket | null = null;
    const end = () => {
      local.destroy();
      remote?.destroy();
      open.delete(local);
    };
    local.on('close', end);
    void (async () => {
      let address: string;
      try {
        address = await resolveOutbound(options.host, options.policy, options.timeoutMs);
      } catch (err) {
        fail(err instanceof OutboundRefused ? 'refused' : 'connect');
        return end();
      }
      if (local.destroyed) return;
      const r = (remote = net.connect({ host: address, port: options.port }));
      open.add(r);
      r.on('close', () => open.delete(r));
      const limit = setTimeout(() => {
        fail('connect');
        end();
      }, options.timeoutMs);
      limit.unref();
      r.on('error', () => {
        if (r.connecting) fail('connect');
        end();
      });
      r.on('connect', () => {
        clearTimeout(limit);
        local.resume();
      });
      r.on('close', () => {
        clearTimeout(limit);
        if (!checker.confirmed && failure === null) fail('connect');
        end();
      });
      r.on('data', (chunk: Buffer) => {
        const pass = checker.server(chunk);
        if (pass === null) {
          fail('protocol');
          return end();
        }
        if (checker.confirmed) confirmed = true;
        if (pass.length > 0 && !local.write(pass)) r.pause();
      });
      local.on('drain', () => r.resume());
      local.on('data', (chunk: Buffer) => {
        checker.client(chunk);
        if (!r.write(chunk)) local.pause();
      });
      r.on('drain', () => local.resume());
      local.on('end', () => r.end());
      r.on('end', () => local.end());
    })();
  }

  return {
    port() {
      listening ??= new Promise<number>((resolve, reject) => {
        const s = (server = net.createServer({ pauseOnConnect: true }, carry));
        s.on('error', reject);
        s.listen(0, '127.0.0.1', () => resolve((s.address() as net.AddressInfo).port));
        s.unref();
      });
      return listening;
    },
    state: () => ({ failure, confirmed }),
    reset() {
      failure = null;
      confirmed = false;
    },
    async close() {
      for (const s of open) s.destroy();
      open.clear();
      const s = server;
      server = null;
      listening = null;
      if (s) await new Promise<void>((r) => s.close(() => r()));
    },
  };
}

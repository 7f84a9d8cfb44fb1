// Listeners on 127.0.0.1 that do not speak the protocol a database source expects: the remote
// servers of issue 20's findings, each started on a free port and stopped again.
import net from 'node:net';

export interface Listener {
  port: number;
  /** bytes written to clients so far */
  sent(): number;
  stop(): Promise<void>;
}

/** Answers every connection with `behave`; the sockets are destroyed on stop. */
export async function listen(
  behave: (socket: net.Socket, count: (n: number) => void) => void,
): Promise<Listener> {
  const sockets = new Set<net.Socket>();
  let sent = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    behave(socket, (n) => (sent += n));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    sent: () => sent,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

const write = (socket: net.Socket, count: (n: number) => void, bytes: Buffer) => {
  if (socket.destroyed) return;
  count(bytes.length);
  socket.write(bytes);
};

/** The remote's own text: an answer quoting it would let a tenant read the remote's bytes. */
export const REMOTE_TEXT = 'ECHO-from-the-remote';

/** MariaDB's greeting: protocol 10, a version string, a thread id, a salt. */
export function mariadbGreeting(): Buffer {
  const payload = Buffer.concat([
    Buffer.from([10]),
    Buffer.from('5.5.5-10.11.6-MariaDB\0', 'latin1'),
    Buffer.from([1, 0, 0, 0]),
    Buffer.from('abcdefgh\0', 'latin1'),
    Buffer.from([0xfe, 0xf7, 0x2d, 0x02, 0x00, 0xff, 0x81, 0x15]),
    Buffer.alloc(10),
    Buffer.from('ijklmnopqrst\0mysql_native_password\0', 'latin1'),
  ]);
  const header = Buffer.alloc(4);
  header.writeUIntLE(payload.length, 0, 3);
  return Buffer.concat([header, payload]);
}

export type Hostile = 'zero-frame' | 'mariadb-greeting' | 'http' | 'garbage' | 'gigabyte' | 'echo' | 'silent';

export const HOSTILE: Record<Hostile, (socket: net.Socket, count: (n: number) => void) => void> = {
  /** four zero bytes on connect and after everything the client sends */
  'zero-frame': (s, c) => {
    write(s, c, Buffer.alloc(4));
    s.on('data', () => write(s, c, Buffer.alloc(4)));
  },
  'mariadb-greeting': (s, c) => write(s, c, mariadbGreeting()),
  http: (s, c) =>
    s.on('data', () => {
      write(
        s,
        c,
        Buffer.from(
          `HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: 20\r\n\r\n${REMOTE_TEXT}`,
        ),
      );
      s.end();
    }),
  /** bytes of no protocol, on connect and on every message */
  garbage: (s, c) => {
    const junk = () => Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 131 + 17) & 0xff));
    write(s, c, junk());
    s.on('data', () => write(s, c, junk()));
  },
  /** up to 1 GB, as fast as the client takes it (stops when the client closes) */
  gigabyte: (s, c) => {
    const chunk = Buffer.alloc(1 << 16, 0x41);
    // a frame header first that claims a huge length in every protocol's reading
    const start = Buffer.alloc(16, 0x7f);
    write(s, c, start);
    let left = 1 << 30;
    const pump = () => {
      while (left > 0 && !s.destroyed) {
        left -= chunk.length;
        c(chunk.length);
        if (!s.write(chunk)) return void s.once('drain', pump);
      }
    };
    pump();
  },
  /** echoes the client's bytes after the remote's own text */
  echo: (s, c) => s.on('data', (d: Buffer) => write(s, c, Buffer.concat([Buffer.from(REMOTE_TEXT), d]))),
  silent: () => undefined,
};

/** A port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

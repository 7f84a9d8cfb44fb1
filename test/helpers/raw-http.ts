// Raw TCP clients for tests that must stop half-way through a request (slow or unfinished bodies),
// which fetch cannot do.
import net from 'node:net';

export interface RawConnection {
  socket: net.Socket;
  /** everything received so far */
  received(): string;
  /** resolves with what was received once the server closes the connection */
  closed: Promise<string>;
}

export function connect(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const text = () => Buffer.concat(chunks).toString('latin1');
    const closed = new Promise<string>((done) => socket.on('close', () => done(text())));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {}); // a reset after the server gives up is expected here
    socket.once('connect', () => resolve({ socket, received: text, closed }));
    socket.once('error', reject);
  });
}

/** The head of a POST with a JSON body of `length` bytes (which the caller may never finish). */
export function postHead(path: string, length: number, headers: Record<string, string> = {}): string {
  const lines = [
    `POST ${path} HTTP/1.1`,
    'Host: localhost',
    'Content-Type: application/json',
    `Content-Length: ${length}`,
  ];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Status code and parsed JSON body of the first response in `raw`, or null when there is none. */
export function firstResponse(raw: string): { status: number; headers: string; body: unknown } | null {
  const m = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(raw);
  if (!m) return null;
  const headers = m[2]!;
  const length = /content-length: *(\d+)/i.exec(headers);
  const text = length ? m[3]!.slice(0, Number(length[1])) : m[3]!;
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: Number(m[1]), headers, body };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

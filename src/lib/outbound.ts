// Where the service may open connections on a tenant's behalf (SPEC 13, `network.outbound`):
// database sources now, alert channels later. A tenant names a host; the service resolves it,
// checks every address against the policy, and connects to the checked address itself, so a name
// that resolves differently a moment later (DNS rebinding) cannot switch the target.
//
//   any     every address (the default of self_hosted: the owner's own databases on the same
//           machine or LAN are the usual targets)
//   public  no loopback, private, link-local, unique-local, CGNAT, metadata, multicast or
//           reserved address; `network.allowed_hosts` (names or CIDRs) lists exceptions
import { lookup } from 'node:dns/promises';
import net from 'node:net';

export type OutboundMode = 'any' | 'public';

export interface NetworkPolicy {
  outbound: OutboundMode;
  /** exceptions to `public`: host names (exact, case-insensitive), IP addresses or CIDRs */
  allowedHosts: readonly string[];
}

export const ANY_OUTBOUND: NetworkPolicy = Object.freeze({
  outbound: 'any',
  allowedHosts: Object.freeze([]) as readonly string[],
});

/** A refusal of the policy (or of a host that is no host): never a statement about the port. */
export class OutboundRefused extends Error {
  readonly code = 'EOUTBOUND';
}

const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/**
 * A host a tenant may name: a DNS name or an IP literal (IPv6 optionally in brackets), nothing
 * else: no `/` (a unix socket directory), no `?`, `,`, `@`, `:port`, spaces or percent escapes.
 */
export function isHostName(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (net.isIP(bare) !== 0) return !bare.includes('%'); // no IPv6 zone ids
  if (bare !== host) return false;
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return name.split('.').every((label) => LABEL.test(label));
}

/** The host without IPv6 brackets. */
export function bareHost(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function blockList(): net.BlockList {
  const list = new net.BlockList();
  const v4: Array<[string, number]> = [
    ['0.0.0.0', 8], // "this network"
    ['10.0.0.0', 8],
    ['100.64.0.0', 10], // CGNAT (and cloud metadata such as 100.100.100.200)
    ['127.0.0.0', 8],
    ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, broadcast
  ];
  for (const [net4, prefix] of v4) list.addSubnet(net4, prefix, 'ipv4');
  const v6: Array<[string, number]> = [
    ['::', 128],
    ['::1', 128],
    ['64:ff9b::', 96], // NAT64: the embedded IPv4 address decides, refused outright
    ['64:ff9b:1::', 48],
    ['100::', 64],
    ['2001::', 23],
    ['2001:db8::', 32],
    ['2002::', 16], // 6to4 embeds IPv4 addresses
    ['fc00::', 7], // unique-local (fd00:ec2::254 metadata included)
    ['fe80::', 10], // link-local
    ['fec0::', 10],
    ['ff00::', 8], // multicast
  ];
  for (const [net6, prefix] of v6) list.addSubnet(net6, prefix, 'ipv6');
  return list;
}

const PRIVATE = blockList();

/** Whether an address is one `public` refuses (loopback, private, link-local, metadata, ...). */
export function isInternalAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    // IPv4-mapped (::ffff:a.b.c.d, ::ffff:7f00:1, 0:0:0:0:0:ffff:...): the IPv4 address decides
    const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1).toLowerCase();
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
    if (mapped) {
      const hi = parseInt(mapped[1]!, 16);
      const lo = parseInt(mapped[2]!, 16);
      return isInternalAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
    }
  }
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

function exceptionList(entries: readonly string[]): { names: Set<string>; addresses: net.BlockList } {
  const names = new Set<string>();
  const addresses = new net.BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    const [base, bits] = entry.split('/');
    const family = net.isIP(bareHost(base ?? ''));
    if (family !== 0) {
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (bits === undefined) addresses.addAddress(bareHost(base!), type);
      else addresses.addSubnet(bareHost(base!), Number(bits), type);
    } else if (entry !== '') names.add(entry.toLowerCase().replace(/\.$/, ''));
  }
  return { names, addresses };
}

/** Checks an allowed_hosts list (start-up): every entry a host name, an IP address or a CIDR. */
export function checkAllowedHosts(entries: readonly string[]): string | null {
  for (const entry of entries) {
    const [base, bits, extra] = entry.trim().split('/');
    if (extra !== undefined) return `"${entry}" is not a host name, IP address or CIDR`;
    const family = net.isIP(bareHost(base ?? ''));
    if (bits !== undefined) {
      const max = family === 4 ? 32 : family === 6 ? 128 : -1;
      if (!/^\d{1,3}$/.test(bits) || Number(bits) > max)
        return `"${entry}" is not a host name, IP address or CIDR`;
    } else if (family === 0 && !isHostName(base ?? ''))
      return `"${entry}" is not a host name, IP address or CIDR`;
  }
  return null;
}

const exceptionCache = new WeakMap<readonly string[], ReturnType<typeof exceptionList>>();

/** Whether the policy lets the service connect to `address` (resolved from `host`). */
export function addressAllowed(policy: NetworkPolicy, host: string, address: string): boolean {
  if (policy.outbound === 'any') return true;
  let exceptions = exceptionCache.get(policy.allowedHosts);
  if (!exceptions) exceptionCache.set(policy.allowedHosts, (exceptions = exceptionList(policy.allowedHosts)));
  if (exceptions.names.has(bareHost(host).toLowerCase().replace(/\.$/, ''))) return true;
  const family = net.isIP(address);
  if (family !== 0 && exceptions.addresses.check(address, family === 4 ? 'ipv4' : 'ipv6')) return true;
  return !isInternalAddress(address);
}

/**
 * The address to connect to for a tenant's host: resolved (every address of the name checked; one
 * refused address refuses the name), or OutboundRefused. Callers connect to the address returned,
 * never to the name. This is the one check alert channels are to use as well.
 */
export async function resolveOutbound(
  host: string,
  policy: NetworkPolicy,
  timeoutMs = 5_000,
): Promise<string> {
  if (!isHostName(host)) throw new OutboundRefused('the host must be a DNS name or an IP address');
  const bare = bareHost(host);
  let addresses: string[];
  if (net.isIP(bare) !== 0) addresses = [bare];
  else {
    let timer: NodeJS.Timeout | undefined;
    try {
      const found = await Promise.race([
        lookup(bare, { all: true, verbatim: true }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(Object.assign(new Error('name lookup timed out'), { code: 'ETIMEDOUT' })),
            timeoutMs,
          );
          timer.unref();
        }),
      ]);
      addresses = found.map((a) => a.address);
    } finally {
      clearTimeout(timer);
    }
  }
  if (addresses.length === 0) throw Object.assign(new Error('no address'), { code: 'ENOTFOUND' });
  for (const address of addresses) {
    if (!addressAllowed(policy, host, address)) {
      throw new OutboundRefused(
        'the host is not allowed by network.outbound ("public" refuses internal addresses)',
      );
    }
  }
  return addresses[0]!;
}

/** TLS through the relay: the source's own host name for SNI (none for an IP literal). */
export function serverName(host: string): { servername?: string } {
  return net.isIP(bareHost(host)) === 0 ? { servername: host } : {};
}

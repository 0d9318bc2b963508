import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Server-side request forgery guard for customer webhook URLs. A URL is allowed only when every
 * address its host resolves to is public; the caller then connects to the address that was
 * checked (see `pinnedLookup`), so a DNS answer that changes between the check and the connection
 * (rebinding) cannot redirect the request. Checked when an endpoint is created and again before
 * every delivery attempt.
 */

/**
 * The URL's host does not resolve, or (`nonPublic`) its address is not allowed. A refused host
 * name's message never names the address it resolved to, nor whether it resolved at all: whoever
 * can create an endpoint (or read its attempts log) would otherwise read the internal DNS.
 */
export class UnsafeUrlError extends Error {
  override name = 'UnsafeUrlError';
  constructor(
    message: string,
    readonly nonPublic: boolean,
  ) {
    super(message);
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses; tests substitute their own. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => ({
    address: entry.address,
    family: entry.family === 6 ? 6 : 4,
  }));

/** Special-purpose ranges (IANA IPv4 and IPv6 special-purpose registries), by what they are. */
const RANGES: [category: string, family: 'ipv4' | 'ipv6', network: string, prefix: number][] = [
  ['unspecified', 'ipv4', '0.0.0.0', 8],
  ['private', 'ipv4', '10.0.0.0', 8],
  ['carrier-grade NAT', 'ipv4', '100.64.0.0', 10],
  ['loopback', 'ipv4', '127.0.0.0', 8],
  ['link-local', 'ipv4', '169.254.0.0', 16],
  ['private', 'ipv4', '172.16.0.0', 12],
  ['reserved', 'ipv4', '192.0.0.0', 24],
  ['documentation', 'ipv4', '192.0.2.0', 24],
  ['reserved', 'ipv4', '192.88.99.0', 24],
  ['private', 'ipv4', '192.168.0.0', 16],
  ['benchmarking', 'ipv4', '198.18.0.0', 15],
  ['documentation', 'ipv4', '198.51.100.0', 24],
  ['documentation', 'ipv4', '203.0.113.0', 24],
  ['multicast', 'ipv4', '224.0.0.0', 4],
  ['reserved', 'ipv4', '240.0.0.0', 4],
  ['unspecified', 'ipv6', '::', 128],
  ['loopback', 'ipv6', '::1', 128],
  ['unique local', 'ipv6', 'fc00::', 7],
  ['link-local', 'ipv6', 'fe80::', 10],
  ['site-local', 'ipv6', 'fec0::', 10],
  ['multicast', 'ipv6', 'ff00::', 8],
  // Inside global unicast (2000::/3): protocol assignments (Teredo, ORCHID…), documentation, and
  // 6to4, which can tunnel to any IPv4 address.
  ['reserved', 'ipv6', '2001::', 23],
  ['documentation', 'ipv6', '2001:db8::', 32],
  ['reserved', 'ipv6', '2002::', 16],
  ['documentation', 'ipv6', '3fff::', 20],
];

const blockLists = new Map<string, BlockList>();
for (const [category, family, network, prefix] of RANGES) {
  let list = blockLists.get(category);
  if (!list) {
    list = new BlockList();
    blockLists.set(category, list);
  }
  list.addSubnet(network, prefix, family);
}

/** IPv6 outside global unicast (2000::/3) is not public, whatever else it is. */
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

/** The 16 bytes of an IPv6 address, `::` and a trailing dotted quad included. */
function ipv6Bytes(address: string): Buffer {
  let text = address.split('%')[0] ?? address;
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (quad) {
    const [a = 0, b = 0, c = 0, d = 0] = quad.split('.').map(Number);
    text = `${text.slice(0, -quad.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const words = (part: string) => (part === '' ? [] : part.split(':'));
  const left = words(head);
  const right = tail === undefined ? [] : words(tail);
  const middle = Array(8 - left.length - right.length).fill('0');
  const bytes = Buffer.alloc(16);
  [...left, ...middle, ...right].forEach((word, index) => {
    bytes.writeUInt16BE(Number.parseInt(word, 16), index * 2);
  });
  return bytes;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d), if it is one. */
function mappedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  const mapped =
    bytes.subarray(0, 10).every((byte) => byte === 0) && bytes.readUInt16BE(10) === 0xffff;
  return mapped ? [...bytes.subarray(12)].join('.') : undefined;
}

/**
 * What makes an IP address non-public (`loopback`, `private`, `IPv4-mapped loopback`, …), or
 * undefined when it is a public address.
 */
export function nonPublicCategory(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'invalid';
  if (family === 6) {
    const ipv4 = mappedIpv4(address);
    if (ipv4 !== undefined) {
      const category = nonPublicCategory(ipv4);
      return category && `IPv4-mapped ${category}`;
    }
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [category, list] of blockLists) if (list.check(address, type)) return category;
  if (family === 6 && !globalUnicast.check(address, 'ipv6')) return 'non-public';
  return undefined;
}

const article = (category: string) => (/^(unspecified|invalid|IPv4)/.test(category) ? 'an' : 'a');

/** The host of a URL as a name or a bare IP address (no IPv6 brackets). */
export function urlHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * The address to connect to for `url`: its IP literal, or the first address its host resolves
 * to. Throws UnsafeUrlError when the host does not resolve, or (unless `allowPrivate`) when any
 * of its addresses is not public.
 */
export async function resolveWebhookTarget(
  url: URL,
  options: { allowPrivate: boolean; resolver?: HostResolver },
): Promise<ResolvedAddress> {
  const host = urlHost(url);
  const literal = isIP(host);
  if (literal !== 0) {
    // The caller typed this address: naming its kind tells them nothing they did not know.
    const category = options.allowPrivate ? undefined : nonPublicCategory(host);
    if (category !== undefined) {
      throw new UnsafeUrlError(`${host} is ${article(category)} ${category} address`, true);
    }
    return { address: host, family: literal === 6 ? 6 : 4 };
  }
  let addresses: ResolvedAddress[] = [];
  let failure = '';
  try {
    addresses = await (options.resolver ?? systemResolver)(host);
  } catch (error) {
    failure = ` (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (!options.allowPrivate) {
    // A name that does not resolve is refused in the same words as one whose address is not
    // public, so that neither an internal name's address nor its existence shows.
    if (addresses.length === 0 || addresses.some(({ address }) => nonPublicCategory(address))) {
      throw new UnsafeUrlError(`${host} does not resolve to an allowed address`, true);
    }
  } else if (addresses.length === 0) {
    throw new UnsafeUrlError(`${host} does not resolve${failure}`, false);
  }
  return addresses[0] as ResolvedAddress;
}

/**
 * A `lookup` for node:http(s) requests that answers with the address already checked, never
 * asking DNS again. Handles both callback forms (`all` is set when Node races address families).
 */
export function pinnedLookup(target: ResolvedAddress) {
  return (
    _hostname: string,
    options: { all?: boolean },
    callback: (...args: unknown[]) => void,
  ): void => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

import type { Server } from 'node:http';
import { BlockList, isIP, type Socket } from 'node:net';
import type { Env } from '../../config/env.js';

/**
 * What a client may hold of the api's connections (issue 24 item 3: a slow client kept one for
 * 330 s). Node's HTTP server closes a request whose headers or whole body have not arrived in
 * time (headersTimeout, requestTimeout: answered 408 by api/http-protocol.ts) and an idle
 * kept-alive connection (keepAliveTimeout). Two things it leaves open are bounded here:
 *
 * - a connection that sends nothing at all is never a request, so no request timeout covers
 *   it: it is closed when its first bytes have not come within the headers timeout;
 * - how many connections one address holds at once: beyond `maxPerAddress` a new one is closed
 *   at once, unanswered (its request has not been read). The address is the socket's: a
 *   load balancer's connections carry many clients, so those from TRUSTED_PROXIES are not
 *   counted (the balancer limits its own clients; X-Forwarded-For is only known per request,
 *   after the connection was accepted).
 */

/**
 * The Fastify constructor's options for Node's timeouts (Fastify's own defaults are none for a
 * request and 72 s of keep-alive). Node looks for expired requests every
 * connectionsCheckingInterval (30 s by default): every second here, or a quarter of the headers
 * timeout when that is shorter, so a request is closed at most that late.
 */
export function httpTimeoutOptions(env: Env) {
  const timeouts = {
    headersTimeout: env.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: env.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  };
  return {
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    http: {
      ...timeouts,
      connectionsCheckingInterval: checkingIntervalOf(timeouts.headersTimeout),
    },
  };
}

/** How often Node checks its connections' timeouts: a quarter of the headers timeout, at most 1 s. */
const checkingIntervalOf = (headersTimeout: number) =>
  Math.min(1_000, Math.floor(headersTimeout / 4));

/** The limits below, from the environment. */
export function connectionLimitsOf(env: Env): ConnectionLimits {
  return {
    maxPerAddress: env.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
    // One check before the headers timeout: a silent connection is closed without a word before
    // Node's check could find it past the timeout and write it a 408 (a race under load).
    firstBytesWithinMs:
      env.HTTP_HEADERS_TIMEOUT_MS - checkingIntervalOf(env.HTTP_HEADERS_TIMEOUT_MS),
    trustedProxies: env.TRUSTED_PROXIES,
  };
}

export interface ConnectionLimits {
  maxPerAddress: number;
  /** How long a new connection may stay silent. */
  firstBytesWithinMs: number;
  /** TRUSTED_PROXIES: addresses, CIDR ranges, and proxy-addr's named ranges. */
  trustedProxies: string[];
}

/** proxy-addr's named ranges (fastify's trustProxy), as subnets. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** The addresses config/env.ts accepted for TRUSTED_PROXIES, as a BlockList to look up in. */
export function addressListOf(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries.flatMap((each) => NAMED_RANGES[each] ?? [each])) {
    const [address = '', prefix] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

export function limitConnections(server: Server, limits: ConnectionLimits): void {
  const trusted = addressListOf(limits.trustedProxies);
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    // bytesRead, not a 'data' listener: one would take the socket off Node's native parsing.
    const silence = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, limits.firstBytesWithinMs);
    silence.unref();
    socket.once('close', () => clearTimeout(silence));

    const address = socket.remoteAddress;
    if (address === undefined) return;
    if (trusted.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > limits.maxPerAddress) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

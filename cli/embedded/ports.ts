import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** True when nothing listens on host:port. */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * Where the OS takes the local ports of outgoing connections from (Linux; else its default). A
 * port in that range that is free now can be taken by any new connection before its server binds
 * it, and was: a chaos api died on EADDRINUSE after its stack's own clients started.
 */
function ephemeralPorts(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low && high) return { low, high };
  } catch {}
  return { low: 32_768, high: 60_999 };
}

/** Ports below this are left to services with well-known or configured ports. */
const LOWEST_PICKED = 10_000;

/** A port free right now and below the ephemeral range, so no outgoing connection takes it. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const { low } = ephemeralPorts();
  for (let tries = 0; low > LOWEST_PICKED + 1_000 && tries < 100; tries++) {
    const port = LOWEST_PICKED + randomInt(low - LOWEST_PICKED);
    if (await isPortFree(port, host)) return port;
  }
  return anyFreePort(host);
}

/** Whatever free port the OS hands out (within the ephemeral range). */
function anyFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

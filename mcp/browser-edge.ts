import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Env } from '../config/env.js';

/**
 * What a browser may do at the MCP endpoint and the authorization server, before any route runs
 * (docs/mcp.md, "Browser clients"):
 * - the Host must name this server (PUBLIC_URL's host, MCP_ALLOWED_HOSTS, or loopback), else 421:
 *   a DNS-rebinding page reaches Herald under the attacker's host name;
 * - a present Origin must be allowed, else 403 (MCP's Origin rule); no Origin is a non-browser client;
 * - the public-client endpoints (/mcp, discovery, registration, token, revocation) answer CORS for
 *   the MCP_CORS_ORIGINS origins. The sign-in and consent pages never do: their form posts may
 *   come from Herald's own pages only, which send `Origin: null` (Referrer-Policy: no-referrer).
 * The REST API and the console are not touched.
 */

export interface BrowserEdgePolicy {
  publicUrl: string;
  /** MCP_ALLOWED_HOSTS: host names, lower case. */
  allowedHosts: readonly string[];
  /** MCP_CORS_ORIGINS: `['*']` for any origin, or origins. */
  corsOrigins: readonly string[];
}

/** Request headers a browser MCP client sends (TypeScript SDK 1.x and 2.x, the Inspector). */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'MCP-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
  'Mcp-Session-Id',
  'Last-Event-ID',
];
/** A 2026-07-28 client mirrors annotated tool arguments in `Mcp-Param-<name>` headers. */
const PARAM_HEADER = /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]+$/i;
const EXPOSED_HEADERS = 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version';
/** Chromium keeps a preflight at most 2 hours. */
const PREFLIGHT_MAX_AGE_S = 7200;

export function browserEdgePolicyOf(env: Env, publicUrl: string): BrowserEdgePolicy {
  return { publicUrl, allowedHosts: env.MCP_ALLOWED_HOSTS, corsOrigins: env.MCP_CORS_ORIGINS };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

type Edge =
  | { kind: 'mcp'; methods: string }
  | { kind: 'public'; methods: string }
  | { kind: 'page' };

const OAUTH_PREFIX = /^\/(mcp\/)?oauth(\/|$)/;
const PUBLIC_OAUTH = /^\/(mcp\/)?oauth\/(register|token|revoke)$/;
const DISCOVERY = /^\/\.well-known\/(oauth-|openid-configuration)/;

/** Which part of the edge a path is, by the decoded path the router matched. */
function edgeOf(path: string): Edge | null {
  if (path === '/mcp') return { kind: 'mcp', methods: 'GET, POST, DELETE' };
  if (DISCOVERY.test(path)) return { kind: 'public', methods: 'GET' };
  if (PUBLIC_OAUTH.test(path)) return { kind: 'public', methods: 'POST' };
  if (OAUTH_PREFIX.test(path)) return { kind: 'page' };
  return null;
}

/** The path as the router sees it: `/%6Dcp` is `/mcp`. */
function decodedPath(request: FastifyRequest): string {
  const path = request.url.split('?', 1)[0] ?? '';
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The host name of a Host header or an origin, lower case, IPv6 in brackets; null if none. */
function hostNameOf(authority: string): string | null {
  if (!URL.canParse(`http://${authority}`)) return null;
  return new URL(`http://${authority}`).hostname.replace(/\.$/, '');
}

function refuse(reply: FastifyReply, edge: Edge, status: number, message: string) {
  const body =
    edge.kind === 'mcp'
      ? { jsonrpc: '2.0', error: { code: -32000, message }, id: null }
      : { error: 'invalid_request', error_description: message };
  return reply.code(status).header('cache-control', 'no-store').send(body);
}

export function guardBrowserEdge(app: FastifyInstance, policy: BrowserEdgePolicy): void {
  const own = new URL(policy.publicUrl);
  const hosts = new Set([own.hostname, ...policy.allowedHosts]);
  const anyOrigin = policy.corsOrigins.includes('*');
  const corsOrigins = new Set(policy.corsOrigins);

  // A rebinding page's requests carry its own host name, never a loopback one.
  const isOwnHost = (host: string) => {
    const name = hostNameOf(host);
    return name !== null && (hosts.has(name) || LOOPBACK_HOSTS.has(name));
  };
  /** PUBLIC_URL's origin; on loopback, under any loopback name with the same port. */
  const isOwnOrigin = (origin: string) => {
    if (!URL.canParse(origin)) return false;
    const url = new URL(origin);
    if (url.origin === own.origin) return true;
    return (
      LOOPBACK_HOSTS.has(own.hostname) &&
      LOOPBACK_HOSTS.has(url.hostname) &&
      url.protocol === own.protocol &&
      url.port === own.port
    );
  };
  const isCorsOrigin = (origin: string) =>
    anyOrigin || corsOrigins.has(origin) || isOwnOrigin(origin);

  app.addHook('onRequest', async (request, reply) => {
    const edge = edgeOf(decodedPath(request));
    if (edge === null) return;
    // request.host follows X-Forwarded-Host from TRUSTED_PROXIES only.
    if (request.host !== '' && !isOwnHost(request.host)) {
      return refuse(reply, edge, 421, `This server does not answer for the host ${request.host}.`);
    }
    const origin = request.headers.origin;
    if (edge.kind === 'page') {
      if (origin === undefined || origin === 'null' || isOwnOrigin(origin)) return;
      return refuse(reply, edge, 403, `The origin ${origin} may not post to this page.`);
    }
    // Set on the raw response: kept by a reply the route writes itself (the MCP transport).
    reply.raw.setHeader('vary', 'Origin');
    if (origin === undefined) return;
    if (!isCorsOrigin(origin)) {
      return refuse(reply, edge, 403, `The origin ${origin} is not allowed.`);
    }
    reply.raw.setHeader('access-control-allow-origin', origin);
    reply.raw.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    const preflightMethod = request.headers['access-control-request-method'];
    if (request.method !== 'OPTIONS' || preflightMethod === undefined) return;
    return reply
      .code(204)
      .header('access-control-allow-methods', edge.methods)
      .header('access-control-allow-headers', allowedHeadersFor(request))
      .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_S))
      .send();
  });
}

/** The fixed list, and the `Mcp-Param-*` headers the preflight asks for. */
function allowedHeadersFor(request: FastifyRequest): string {
  const asked = String(request.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => PARAM_HEADER.test(name));
  return [...ALLOWED_HEADERS, ...asked].join(', ');
}

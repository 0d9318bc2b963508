import { isIP } from 'node:net';
import { z } from 'zod';
import { callbackPatternProblem } from '../domain/callback-pattern.js';
import { ringProblem } from '../domain/key-ring.js';

/** The one place that reads `process.env`. Empty strings count as unset, as in compose files. */

const flag = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1');

/** A duration in milliseconds from `min` to `max`. */
const milliseconds = (min: number, max: number) => {
  const error = `must be a whole number of milliseconds from ${min} to ${max}`;
  return z.coerce.number({ error }).int(error).min(min, error).max(max, error);
};

const port = z.coerce
  .number({ error: 'must be a port number' })
  .int('must be a port number')
  .min(0, 'must be a port number')
  .max(65535, 'must be a port number');

export const envSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .refine(isOrigin, {
      error:
        'must be an origin without a path, query or fragment (e.g. https://herald.example.com): Herald serves at the root of its host, where OAuth discovery (RFC 8414, RFC 9728) looks; give it a host of its own',
    })
    .optional(),
  /** Lets PUBLIC_URL be plain http:// when NODE_ENV=production (a test bed, never the internet). */
  ALLOW_INSECURE_PUBLIC_URL: flag.default(false),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection URL')
    .optional(),
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s:/]+:\d+$/, 'must be host:port')
    .optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  /** Ports of the dev server the launcher starts when TEMPORAL_ADDRESS is unset. */
  TEMPORAL_DEV_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  /** A key ring: one key, or several comma-separated, newest first (domain/key-ring.ts). */
  HERALD_SECRET: z
    .string()
    .superRefine((ring, context) => {
      const problem = ringProblem(ring);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  HERALD_DATA_DIR: z.string().min(1).default('.data'),
  IDEMPOTENCY_KEY_TTL_HOURS: z.coerce
    .number({ error: 'must be a whole number of hours' })
    .int('must be a whole number of hours')
    .min(24, 'must be at least 24')
    .default(24),
  MCP_ENABLED: flag.default(false),
  MCP_ALLOW_DYNAMIC_CLIENTS: flag.default(true),
  MCP_REDIRECT_URIS: z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((uri) => uri.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z.url({ error: 'must be a comma-separated list of URLs' }).superRefine((entry, context) => {
          const problem = callbackPatternProblem(entry);
          if (problem) context.addIssue({ code: 'custom', message: problem });
        }),
      ),
    ),
  MCP_DELIVERY_SUMMARY_CACHE_TTL: z.coerce
    .number({ error: 'must be a number of seconds' })
    .int('must be a number of seconds')
    .min(0, 'must be a number of seconds')
    .default(30),
  /**
   * Browser origins that may call /mcp and the public OAuth endpoints (CORS, mcp/browser-edge.ts):
   * `*` (any; bearer tokens, never cookies) or a comma-separated list of origins.
   */
  MCP_CORS_ORIGINS: z
    .string()
    .default('*')
    .transform(commaSeparated)
    .pipe(
      z
        .array(z.string().refine(isOriginOrAny, { error: 'must be * or a list of origins' }))
        .refine((list) => !list.includes('*') || list.length === 1, {
          error: 'must be * alone or a list of origins',
        })
        .transform((list) => list.map((entry) => (entry === '*' ? entry : new URL(entry).origin))),
    ),
  /** Host names besides PUBLIC_URL's that /mcp and the OAuth endpoints answer (DNS rebinding). */
  MCP_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform(commaSeparated)
    .pipe(
      z.array(
        z
          .string()
          .regex(/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/i, 'must be a comma-separated list of host names')
          .transform((host) => host.toLowerCase()),
      ),
    ),
  SIMULATOR_PORT: port.default(4010),
  /** Where `herald worker` serves /livez and /readyz (on HOST); unset: no probe port. */
  WORKER_HEALTH_PORT: port.optional(),
  /**
   * Where every Herald process serves Prometheus metrics, `/metrics` on HOST: a port of its own,
   * kept off the public api (unauthenticated, and no business of the internet); unset: none.
   */
  METRICS_PORT: port.optional(),
  /** The web console under /console (and `/` redirecting there); `false` leaves both unrouted. */
  CONSOLE_ENABLED: flag.default(true),
  /** The operator's `own` provider (simulator API); defaults to the local simulator. */
  OWN_PROVIDER_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  /** Submissions per second the `own` provider takes, across all workers; unset: no limit. */
  OWN_PROVIDER_MESSAGES_PER_SECOND: z.coerce
    .number({ error: 'must be a whole number from 1 to 10000' })
    .int('must be a whole number from 1 to 10000')
    .min(1, 'must be a whole number from 1 to 10000')
    .max(10_000, 'must be a whole number from 1 to 10000')
    .optional(),
  /** A campaign message not submitted within this many hours of the send is failed, not sent late. */
  MESSAGE_VALIDITY_HOURS: z.coerce
    .number({ error: 'must be a whole number of hours from 1 to 72' })
    .int('must be a whole number of hours from 1 to 72')
    .min(1, 'must be a whole number of hours from 1 to 72')
    .max(72, 'must be a whole number of hours from 1 to 72')
    .default(24),
  /** A sent message still without a delivery receipt this long is looked up at its provider. */
  RECEIPT_LOOKUP_AFTER_MINUTES: z.coerce
    .number({ error: 'must be a whole number of minutes from 1 to 1440' })
    .int('must be a whole number of minutes from 1 to 1440')
    .min(1, 'must be a whole number of minutes from 1 to 1440')
    .max(1440, 'must be a whole number of minutes from 1 to 1440')
    .default(10),
  /** And given up as an `unknown` receipt this long after its submission. */
  RECEIPT_GIVE_UP_AFTER_HOURS: z.coerce
    .number({ error: 'must be a whole number of hours from 1 to 168' })
    .int('must be a whole number of hours from 1 to 168')
    .min(1, 'must be a whole number of hours from 1 to 168')
    .max(168, 'must be a whole number of hours from 1 to 168')
    .default(48),
  /**
   * After this many days a message's body and rendered text are dropped and its recipient kept
   * only masked (daily maintenance, db/retention.ts); 0 keeps them forever. At least 7: past the
   * longest receipt wait (RECEIPT_GIVE_UP_AFTER_HOURS) and every fraud-guard window.
   */
  RETENTION_DAYS: z.coerce
    .number({ error: 'must be 0 (keep forever) or a whole number of days from 7 to 3650' })
    .int('must be 0 (keep forever) or a whole number of days from 7 to 3650')
    .refine((days) => days === 0 || (days >= 7 && days <= 3650), {
      error: 'must be 0 (keep forever) or a whole number of days from 7 to 3650',
    })
    .default(90),
  /** Deliver webhooks to private, loopback, link-local… addresses too (a trusted network only). */
  WEBHOOK_ALLOW_PRIVATE_URLS: flag.default(false),
  /** Run the webhook outbox dispatcher in this worker process. */
  WEBHOOK_DISPATCHER: flag.default(true),
  /**
   * Proxies whose X-Forwarded-For is believed (fastify trustProxy): addresses, CIDR ranges or
   * proxy-addr's names loopback, linklocal and uniquelocal. Empty: the socket's address counts.
   */
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z.string().refine(isTrustedProxyEntry, {
          error: 'must be a comma-separated list of IP addresses or CIDR ranges',
        }),
      ),
    ),
  /**
   * The api's HTTP connections (server/http/connection-guard.ts): a request's headers must arrive within
   * HTTP_HEADERS_TIMEOUT_MS (and a new connection's first bytes), the whole request within
   * HTTP_REQUEST_TIMEOUT_MS, or its connection is closed; an idle kept-alive connection is closed
   * after HTTP_KEEP_ALIVE_TIMEOUT_MS (keep it above a load balancer's own idle timeout).
   */
  HTTP_HEADERS_TIMEOUT_MS: milliseconds(1_000, 60_000).default(5_000),
  HTTP_REQUEST_TIMEOUT_MS: milliseconds(1_000, 300_000).default(10_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: milliseconds(1_000, 600_000).default(72_000),
  /**
   * Connections one client address may hold at once (a TRUSTED_PROXIES address: any number);
   * above the simulator's 256 for its receipts: a provider's callbacks come from few addresses.
   */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce
    .number({ error: 'must be a whole number from 1 to 100000' })
    .int('must be a whole number from 1 to 100000')
    .min(1, 'must be a whole number from 1 to 100000')
    .max(100_000, 'must be a whole number from 1 to 100000')
    .default(512),
  /**
   * OpenTelemetry tracing, OTel's own variables: traces are exported (OTLP over HTTP) only when
   * one of the two endpoints is set. The traces endpoint is used as given; the general one gets
   * `/v1/traces` appended, as the OTel specification says.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .optional(),
  /** The service name on every span; unset: herald-api, herald-worker, or herald (`herald start`). */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.string().default('development'),
});

export type Env = z.infer<typeof envSchema>;

function commaSeparated(list: string): string[] {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** `*`, or an http(s) origin: a scheme, a host and maybe a port, nothing after. */
function isOriginOrAny(entry: string): boolean {
  if (entry === '*') return true;
  if (!URL.canParse(entry)) return false;
  const url = new URL(entry);
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return bare && !entry.endsWith('?') && !entry.endsWith('#') && /^https?:$/.test(url.protocol);
}

/** An address, an address/prefix, or one of proxy-addr's named ranges. */
function isTrustedProxyEntry(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const present = Object.fromEntries(
    Object.keys(envSchema.shape).flatMap((key) => {
      const value = source[key];
      return value === undefined || value === '' ? [] : [[key, value]];
    }),
  );
  const parsed = envSchema.safeParse(present);
  const problems = parsed.success
    ? problemsAcross(parsed.data)
    : parsed.error.issues.map((issue) => `  ${String(issue.path[0])}: ${issue.message}`);
  if (parsed.success && problems.length === 0) return parsed.data;
  throw new ConfigError(`Invalid environment:\n${problems.join('\n')}`);
}

/** Rules between variables, reported as a variable's own are. */
function problemsAcross(env: Env): string[] {
  const problems: string[] = [];
  // Node's rule: the headers are part of the request.
  if (env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS) {
    problems.push('  HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  if (insecureInProduction(env) && env.PUBLIC_URL && new URL(env.PUBLIC_URL).protocol === 'http:') {
    problems.push(
      '  PUBLIC_URL: must be https:// when NODE_ENV=production (sign-in, OAuth codes and tokens travel through it; MCP requires HTTPS); set ALLOW_INSECURE_PUBLIC_URL=true to run on plain http anyway',
    );
  }
  return problems;
}

/** Production without the explicit exception: PUBLIC_URL must be https. */
function insecureInProduction(env: Env): boolean {
  return env.NODE_ENV === 'production' && !env.ALLOW_INSECURE_PUBLIC_URL;
}

/**
 * Scheme, host and port only. Herald has no path prefix: discovery under one would need
 * path-inserted well-known URLs (RFC 8414 §3, RFC 9728 §3) that only Herald's host could serve.
 */
function isOrigin(url: string): boolean {
  const parsed = new URL(url);
  return parsed.pathname === '/' && !parsed.search && !parsed.hash && !/[?#]/.test(url);
}

/** Settings derived from several variables, computed in one place. */
export function publicUrlOf(env: Env): string {
  if (env.PUBLIC_URL) return env.PUBLIC_URL;
  // The default is plain http: the api and worker in production need the address clients reach.
  if (insecureInProduction(env)) {
    throw new ConfigError(
      'Invalid environment:\n  PUBLIC_URL: required when NODE_ENV=production (the https:// address clients reach Herald at)',
    );
  }
  return `http://${connectableHost(env.HOST)}:${env.PORT}`;
}

/** The local simulator listens on HOST too (`herald start`, `herald simulator`). */
export function ownProviderUrlOf(env: Env): string {
  return env.OWN_PROVIDER_URL ?? `http://${connectableHost(env.HOST)}:${env.SIMULATOR_PORT}`;
}

/** When a message without a delivery receipt is looked up, and when it is given up as `unknown`. */
export function receiptWindowsOf(env: Env) {
  return {
    lookupAfterSeconds: env.RECEIPT_LOOKUP_AFTER_MINUTES * 60,
    giveUpAfterSeconds: env.RECEIPT_GIVE_UP_AFTER_HOURS * 3600,
  };
}

/** Where traces go, or null when tracing is off (neither OTLP endpoint set). */
export function tracingOf(
  env: Env,
  defaultServiceName: string,
): { tracesUrl: string; serviceName: string } | null {
  const general = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (general === undefined ? undefined : `${general.replace(/\/+$/, '')}/v1/traces`);
  if (tracesUrl === undefined) return null;
  return { tracesUrl, serviceName: env.OTEL_SERVICE_NAME ?? defaultServiceName };
}

/** The dev server `herald start` runs when TEMPORAL_ADDRESS is unset listens on loopback only. */
export const TEMPORAL_DEV_HOST = '127.0.0.1';

/** The Temporal frontend: TEMPORAL_ADDRESS, or the dev server of `herald start` on this machine. */
export function temporalAddressOf(env: Env): string {
  return env.TEMPORAL_ADDRESS ?? `${connectableHost(TEMPORAL_DEV_HOST)}:${env.TEMPORAL_DEV_PORT}`;
}

/**
 * Where to connect to a listener bound to `host`, as a URL's host: a wildcard address is not
 * one to connect to, so it means loopback; an IPv6 address needs brackets.
 */
function connectableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

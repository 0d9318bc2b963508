import { randomBytes } from 'node:crypto';
import { rememberSent } from './secrets.js';
import type { ChaosStack } from './stack.js';
import { sleep } from './timing.js';

/** Herald's REST API as a client sees it, and the tenants the scenarios send as. */

export interface Answer {
  /** The HTTP status, `timeout` when no answer came within the client's limit, `error` on a network error. */
  status: number | 'timeout' | 'error';
  ms: number;
  // biome-ignore lint/suspicious/noExplicitAny: the answers are checked field by field where used
  body: any;
  retryAfter: string | null;
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; key?: string; timeoutMs?: number } = {},
): Promise<Answer> {
  const started = performance.now();
  rememberSent(options.body);
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.key) headers['idempotency-key'] = options.key;
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return {
      status: response.status,
      ms: performance.now() - started,
      body,
      retryAfter: response.headers.get('retry-after'),
    };
  } catch (error) {
    const name = (error as Error).name;
    return {
      status: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'error',
      ms: performance.now() - started,
      body: (error as Error).message,
      retryAfter: null,
    };
  }
}

/** An SMSC an SMPP provider binds to (test/support/smsc-peer.ts), with its transceiver account. */
export interface SmppAccount {
  host: string;
  port: number;
  systemId: string;
  password: string;
  /** Submissions awaiting their answer at once; the provider's default (10) when absent. */
  window?: number;
}

export interface Tenant {
  slug: string;
  workspaceId: number;
  token: string;
}

/**
 * A workspace with a key for every send ability, credits, and providers, via the CLI: the
 * simulator's, or SMPP ones where `smpp` names an SMSC.
 */
export async function createTenant(
  stack: ChaosStack,
  options: {
    name: string;
    credits?: number;
    providers?: { slug: string; messagesPerSecond?: number; smpp?: SmppAccount }[];
  },
): Promise<Tenant> {
  const name = `${options.name} ${randomBytes(3).toString('hex')}`;
  const workspace = await stack.admin(['workspace', 'create', '--name', name]);
  const slug = workspace.slug as string;
  const key = await stack.admin([
    'key',
    'create',
    '--workspace',
    slug,
    '--abilities',
    'messages:send,messages:read,otp:send,otp:verify',
  ]);
  if (options.credits)
    await stack.admin(['credits', 'add', '--workspace', slug, '--amount', String(options.credits)]);
  for (const provider of options.providers ?? []) {
    const { smpp } = provider;
    const type = smpp
      ? [
          ...['--type', 'smpp', '--host', smpp.host, '--port', String(smpp.port)],
          ...['--system-id', smpp.systemId, '--password', smpp.password],
          ...(smpp.window ? ['--window', String(smpp.window)] : []),
        ]
      : ['--type', 'simulator', '--base-url', stack.simulatorUrl];
    await stack.admin([
      'provider',
      'create',
      '--workspace',
      slug,
      '--slug',
      provider.slug,
      ...type,
      ...(provider.messagesPerSecond
        ? ['--messages-per-second', String(provider.messagesPerSecond)]
        : []),
    ]);
  }
  return { slug, workspaceId: workspace.id as number, token: key.token as string };
}

/** Australian mobile numbers (the `own` provider's OTP countries): `+614` and nine digits. */
export function recipients(prefix: string, count: number, offset = 0): string[] {
  const width = 9 - (prefix.length - 3);
  return Array.from(
    { length: count },
    (_, i) => `${prefix}${String(offset + i).padStart(width, '0')}`,
  );
}

/**
 * Like `recipients`, but consecutive numbers fall in different number ranges (a range is a number
 * without its last 4 digits), as real users' numbers do: the index's low digits pick the range.
 * OTP sends to `recipients`' sequential numbers would all count toward one range's breaker.
 */
export function spreadRecipients(prefix: string, count: number, offset = 0): string[] {
  const width = 9 - (prefix.length - 3);
  const rangeDigits = width - 4;
  return Array.from({ length: count }, (_, i) => {
    const digits = String(offset + i).padStart(width, '0');
    return `${prefix}${digits.slice(-rangeDigits)}${digits.slice(0, 4)}`;
  });
}

export interface SendRequest {
  recipients: string[];
  message: string;
  provider_slug?: string;
  routing_type?: string;
  failover_route_slug?: string;
  /** ISO 8601 with an offset: a scheduled send. */
  send_at?: string;
}

/** An answer that ends a keyed send's retries: dispatch confirmed (or replayed). */
export function isFinalSend(answer: Answer): boolean {
  return answer.status === 202 && answer.body?.data?.queue?.success === true;
}

/**
 * A client that does what the contract asks: sends under an Idempotency-Key (also the campaign's
 * `reference`, so the suite can tie campaigns to keys) and retries with the same key until the
 * answer is final. Returns every answer and the campaign id.
 */
export async function sendUntilFinal(
  apiUrls: string[],
  tenant: Tenant,
  request: SendRequest,
  key: string,
  options: { deadlineMs?: number; firstAnswer?: Answer } = {},
): Promise<{ id: number; answers: Answer[] }> {
  const answers: Answer[] = options.firstAnswer ? [options.firstAnswer] : [];
  const deadline = Date.now() + (options.deadlineMs ?? 180_000);
  for (let attempt = 0; ; attempt++) {
    const last = answers.at(-1);
    if (last && isFinalSend(last)) return { id: last.body.data.message.id as number, answers };
    if (
      last &&
      typeof last.status === 'number' &&
      [400, 401, 402, 403, 404, 422].includes(last.status)
    )
      throw new Error(`send ${key} refused: ${last.status} ${JSON.stringify(last.body)}`);
    if (Date.now() > deadline)
      throw new Error(`send ${key} not final by its deadline; last answer ${last?.status}`);
    if (last) await sleep(Math.min(5_000, 1000 * Number(last.retryAfter ?? 1)) || 1000);
    const baseUrl = apiUrls[attempt % apiUrls.length] as string;
    answers.push(
      await call(baseUrl, 'POST', '/api/v1/messages', {
        token: tenant.token,
        key,
        body: { ...request, reference: key },
        timeoutMs: 30_000,
      }),
    );
  }
}

export interface CampaignView {
  id: number;
  status: string;
  total_recipients: number;
  queued_count: number;
  sent_count: number;
  failed_count: number;
  /** Issue 27's lifecycle fields. */
  canceled_count: number;
  scheduled_at: string | null;
  completed_at: string | null;
}

export async function campaignView(
  apiUrl: string,
  tenant: Tenant,
  id: number,
): Promise<CampaignView | undefined> {
  const answer = await call(apiUrl, 'GET', `/api/v1/messages/${id}`, {
    token: tenant.token,
    timeoutMs: 10_000,
  });
  return answer.status === 200 ? (answer.body.data.message as CampaignView) : undefined;
}

/** Polls the lookup until the campaign is completed; undefined if it is not by the deadline. */
export async function untilCompleted(
  apiUrls: string[],
  tenant: Tenant,
  id: number,
  timeoutMs: number,
  intervalMs = 250,
): Promise<{ view: CampaignView; at: number } | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; Date.now() < deadline; i++) {
    const view = await campaignView(apiUrls[i % apiUrls.length] as string, tenant, id).catch(
      () => undefined,
    );
    if (view?.status === 'completed') return { view, at: Date.now() };
    await sleep(intervalMs);
  }
  return undefined;
}

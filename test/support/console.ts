/**
 * A browser for the console over `app.inject`: it keeps cookies, reads the CSRF token of the
 * page it is on, and comes from a client address of its own (sign-in throttles count per address).
 */
import { randomInt } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export interface Page {
  status: number;
  headers: LightMyRequestResponse['headers'];
  body: string;
  location: string | undefined;
}

const usedAddresses = new Set<string>();

/**
 * A private address no other console browser of this process uses. Drawn from all of 10/8:
 * test files run in parallel processes against one database, and the sign-in throttle counts
 * failures per address, so two files must not share one (the TEST-NET ranges, 508 addresses,
 * collided across files).
 */
export function freshAddress(): string {
  for (;;) {
    const address = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    if (!usedAddresses.has(address)) {
      usedAddresses.add(address);
      return address;
    }
  }
}

export class ConsoleBrowser {
  readonly cookies = new Map<string, string>();
  /** The hidden `_csrf` field of the last page shown. */
  token: string | undefined;

  constructor(
    private readonly app: FastifyInstance,
    readonly address = freshAddress(),
  ) {}

  private remember(response: LightMyRequestResponse): Page {
    for (const cookie of response.cookies) {
      const expired =
        cookie.value === '' ||
        (cookie.expires !== undefined && cookie.expires.getTime() < Date.now());
      if (expired) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    const field = /name="_csrf" value="([^"]+)"/.exec(response.body)?.[1];
    if (field) this.token = field;
    const location = response.headers.location;
    return {
      status: response.statusCode,
      headers: response.headers,
      body: response.body,
      location: typeof location === 'string' ? location : undefined,
    };
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(url: string): Promise<Page> {
    const response = await this.app.inject({
      method: 'GET',
      url,
      remoteAddress: this.address,
      headers: { cookie: this.cookieHeader() },
    });
    return this.remember(response);
  }

  /** Posts the form with the page's CSRF token unless `_csrf` is given (null: none at all). */
  async post(url: string, form: Record<string, string | string[] | null>): Promise<Page> {
    const body = new URLSearchParams();
    const fields = { _csrf: this.token ?? null, ...form };
    for (const [name, value] of Object.entries(fields)) {
      if (value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) body.append(name, item);
    }
    const response = await this.app.inject({
      method: 'POST',
      url,
      remoteAddress: this.address,
      headers: {
        cookie: this.cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: body.toString(),
    });
    return this.remember(response);
  }

  /** Signs in through the form; returns the answer to the POST. */
  async signIn(email: string, password: string): Promise<Page> {
    await this.get('/console/sign-in');
    return this.post('/console/sign-in', { email, password });
  }
}

/** The text of an HTML page without its tags, for assertions on what a person reads. */
export function visibleText(html: string): string {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The api (console included) on the run's Postgres and Temporal, without the CLI's helpers. */
export async function openConsoleApp(extraEnv: Record<string, string> = {}) {
  const { inject } = await import('vitest');
  const { parseEnv } = await import('../../config/env.js');
  const { createSql } = await import('../../db/client.js');
  const { buildApp } = await import('../../server/app.js');
  const { connectTemporalClient } = await import('../../temporal/client.js');
  const publicUrl = extraEnv.PUBLIC_URL ?? 'http://herald.test';
  const env = parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL: publicUrl, ...extraEnv });
  const secret = inject('secret');
  const sql = createSql(inject('databaseUrl'), { max: 4 });
  const temporal = await connectTemporalClient(inject('temporalAddress'), 'default');
  const app = buildApp({ env, publicUrl, secret, sql, temporal }, { logger: false });
  await app.ready();
  const deps = { env, publicUrl, secret, sql, temporal };
  return {
    app,
    /** Listens on a free loopback port (for a real browser); returns the base URL. */
    async listen(): Promise<string> {
      const address = await app.listen({ host: '127.0.0.1', port: 0 });
      return address;
    },
    sql,
    deps,
    async close() {
      await app.close();
      await temporal.connection.close();
      await sql.end();
    },
  };
}

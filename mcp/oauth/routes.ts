import { isIP } from 'node:net';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../../db/client.js';
import { startAuthorization } from './authorize.js';
import type { OAuthDeps } from './deps.js';
import { OAuthError } from './errors.js';
import { decide, type Interaction, pickWorkspace, signIn, verifyCode } from './interaction.js';
import { REGISTRATION_BODY_LIMIT, registerClient } from './registration.js';
import { revocationEndpoint, tokenEndpoint } from './token.js';

const BROWSER_COOKIE = 'herald_oauth_browser';

type Form = Record<string, string | undefined>;

/** OAuth parameters are single strings; a repeated one is a malformed request. */
function singleValues(input: unknown): Form {
  const form: Form = {};
  for (const [name, value] of Object.entries((input ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string') {
      throw new OAuthError('invalid_request', `${name} must be given exactly once.`);
    }
    form[name] = value;
  }
  return form;
}

/**
 * The client's address for the registration and sign-in limits: request.ip, which follows
 * X-Forwarded-For from TRUSTED_PROXIES only. Should a trusted proxy forward something that is no
 * address, the request counts against the proxy's own address.
 */
function clientAddress(request: FastifyRequest): string {
  if (isIP(request.ip) !== 0) return request.ip;
  return request.socket.remoteAddress ?? '0.0.0.0';
}

/** Pages may not be framed (clickjacking of the Approve button) and never cached. */
function sendPage(reply: FastifyReply, interaction: Interaction, secure: boolean) {
  reply.header('cache-control', 'no-store');
  if (interaction.kind === 'redirect') return reply.redirect(interaction.location, 303);
  if (interaction.setBrowser) {
    reply.setCookie(BROWSER_COOKIE, interaction.setBrowser, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure,
      maxAge: 15 * 60,
    });
  }
  return reply
    .code(interaction.status)
    .headers(interaction.headers ?? {})
    .header('x-frame-options', 'DENY')
    .header(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    )
    .type('text/html; charset=utf-8')
    .send(interaction.html);
}

/** The authorization server's endpoints; mounted under `/oauth` and `/mcp/oauth`. */
export async function authorizationServerRoutes(
  app: FastifyInstance,
  { deps }: { deps: OAuthDeps },
) {
  await app.register(fastifyFormbody);
  await app.register(fastifyCookie);
  const secure = deps.urls.issuer.startsWith('https:');

  app.setErrorHandler((error, request, reply) => {
    reply.header('cache-control', 'no-store');
    if (error instanceof OAuthError) {
      return reply.code(error.status).headers(error.headers).send(error.body());
    }
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    // Postgres is away: the app's one handler answers 503 with Retry-After.
    if (isDatabaseUnavailable(error)) throw error;
    if (status >= 400 && status < 500) {
      return reply
        .code(status)
        .send({ error: 'invalid_request', error_description: (error as Error).message });
    }
    request.log.error({ err: error }, 'authorization server error');
    return reply.code(500).send({ error: 'server_error', error_description: 'Server error.' });
  });

  app.post('/register', { bodyLimit: REGISTRATION_BODY_LIMIT }, async (request, reply) => {
    const body = await registerClient(deps, clientAddress(request), request.body);
    return reply.code(201).header('cache-control', 'no-store').send(body);
  });

  app.get('/authorize', async (request, reply) => {
    return sendPage(reply, await startAuthorization(deps, singleValues(request.query)), secure);
  });

  app.post('/sign-in', async (request, reply) => {
    const form = singleValues(request.body);
    const interaction = await signIn(
      deps,
      { request: form.request ?? '', email: form.email ?? '', password: form.password ?? '' },
      clientAddress(request),
    );
    return sendPage(reply, interaction, secure);
  });

  app.post('/code', async (request, reply) => {
    const form = singleValues(request.body);
    const interaction = await verifyCode(
      deps,
      { request: form.request ?? '', code: form.code ?? '' },
      request.cookies[BROWSER_COOKIE],
    );
    return sendPage(reply, interaction, secure);
  });

  app.post('/workspace', async (request, reply) => {
    const form = singleValues(request.body);
    const interaction = await pickWorkspace(
      deps,
      { request: form.request ?? '', workspace: form.workspace ?? '' },
      request.cookies[BROWSER_COOKIE],
    );
    return sendPage(reply, interaction, secure);
  });

  app.post('/consent', async (request, reply) => {
    const form = singleValues(request.body);
    const interaction = await decide(
      deps,
      { request: form.request ?? '', decision: form.decision ?? '' },
      request.cookies[BROWSER_COOKIE],
    );
    return sendPage(reply, interaction, secure);
  });

  app.post('/token', async (request, reply) => {
    const body = await tokenEndpoint(deps, singleValues(request.body));
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(body);
  });

  app.post('/revoke', async (request, reply) => {
    await revocationEndpoint(deps, singleValues(request.body));
    return reply.code(200).header('cache-control', 'no-store').send();
  });
}

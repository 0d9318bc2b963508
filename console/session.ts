/**
 * The session cookie and the CSRF tokens. The cookie is HttpOnly, SameSite=Lax, Secure when
 * PUBLIC_URL is https, and scoped to /console. Every state-changing request carries a
 * synchronizer token: an HMAC of the session's own token, so it is tied to that session, known
 * only to its pages, and nothing more is stored. Forms before sign-in (sign-in, invitations)
 * are tied the same way to a random pre-session cookie.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_SESSION_TIMEOUTS } from '../commands/console/sessions.js';

export const SESSION_COOKIE = 'herald_session';
const FORM_COOKIE = 'herald_form';
export const CSRF_FIELD = '_csrf';
export const CSRF_HEADER = 'x-csrf-token';

export interface CookieOptions {
  secure: boolean;
}

const cookieBase = (options: CookieOptions) =>
  ({ path: '/console', httpOnly: true, sameSite: 'lax', secure: options.secure }) as const;

export function setSessionCookie(reply: FastifyReply, token: string, options: CookieOptions) {
  reply.setCookie(SESSION_COOKIE, token, {
    ...cookieBase(options),
    maxAge: CONSOLE_SESSION_TIMEOUTS.absoluteSeconds,
  });
}

export function clearSessionCookie(reply: FastifyReply, options: CookieOptions) {
  reply.clearCookie(SESSION_COOKIE, cookieBase(options));
}

export function sessionToken(request: FastifyRequest): string | undefined {
  return request.cookies[SESSION_COOKIE];
}

function tokenFor(key: string, purpose: string): string {
  return createHmac('sha256', key).update(`herald console ${purpose} v1`).digest('base64url');
}

/** The synchronizer token of a session, put into its pages' forms and htmx headers. */
export function csrfTokenFor(sessionToken: string): string {
  return tokenFor(sessionToken, 'csrf');
}

function matches(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request carries: the form's field, or htmx's header. */
function givenToken(request: FastifyRequest): unknown {
  const body = request.body as Record<string, unknown> | undefined;
  return body?.[CSRF_FIELD] ?? request.headers[CSRF_HEADER];
}

export function hasValidCsrf(request: FastifyRequest, sessionToken: string): boolean {
  return matches(givenToken(request), csrfTokenFor(sessionToken));
}

/** The anonymous form's token, setting its cookie first when the browser has none. */
export function formToken(
  request: FastifyRequest,
  reply: FastifyReply,
  options: CookieOptions,
): string {
  let key = request.cookies[FORM_COOKIE];
  if (key?.length !== 43) {
    key = randomBytes(32).toString('base64url');
    reply.setCookie(FORM_COOKIE, key, { ...cookieBase(options), maxAge: 24 * 60 * 60 });
  }
  return tokenFor(key, 'form');
}

export function hasValidFormToken(request: FastifyRequest): boolean {
  const key = request.cookies[FORM_COOKIE];
  return key !== undefined && matches(givenToken(request), tokenFor(key, 'form'));
}

import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Scripts only from the console's own assets (no inline script, no eval), styles only from its
 * own stylesheets, no framing (clickjacking), forms only back to Herald.
 */
export const CONSOLE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** The client's address as the api believes it (X-Forwarded-For from TRUSTED_PROXIES only). */
export function clientAddress(request: FastifyRequest): string {
  if (isIP(request.ip) !== 0) return request.ip;
  return request.socket.remoteAddress ?? '0.0.0.0';
}

export function userAgent(request: FastifyRequest): string | null {
  const value = request.headers['user-agent'];
  return typeof value === 'string' ? value : null;
}

export function sendHtml(reply: FastifyReply, status: number, html: string) {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', CONSOLE_POLICY)
    .header('x-frame-options', 'DENY')
    .type('text/html; charset=utf-8')
    .send(html);
}

/** A redirect that htmx follows as a full page load, and a browser as a 303. */
export function redirect(request: FastifyRequest, reply: FastifyReply, location: string) {
  if (request.headers['hx-request'] === 'true') {
    return reply.code(204).header('hx-redirect', location).send();
  }
  return reply.code(303).header('cache-control', 'no-store').redirect(location, 303);
}

/** A record's number in the URL (`/batches/:id`), or undefined when it is not one. */
export function idParam(value: string): number | undefined {
  return /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

export type Form = Record<string, string | string[] | undefined>;

/** The urlencoded body (formbody), or an empty form for anything else. */
export function formOf(request: FastifyRequest): Form {
  const body = request.body;
  return body && typeof body === 'object' ? (body as Form) : {};
}

/** One text field: a repeated field counts as its first value. */
export function text(form: Form, name: string): string | undefined {
  const value = form[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A multi-valued field (checkboxes). */
export function list(form: Form, name: string): string[] {
  const value = form[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

import type { FastifyInstance } from 'fastify';

/**
 * Herald's pages are self-contained (inline styles, no scripts, no external assets), so their
 * policy forbids everything else, framing included (clickjacking of the sign-in and consent).
 * A page that needs more (the API docs' script) sets its own policy first.
 */
export const PAGE_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Headers on every answer: no MIME sniffing, no referrer leaks, and the page policy on HTML. */
export function addSecurityHeaders(app: FastifyInstance) {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html')) {
      if (!reply.hasHeader('content-security-policy')) {
        reply.header('content-security-policy', PAGE_POLICY);
      }
      reply.header('x-frame-options', 'DENY');
    }
  });
}

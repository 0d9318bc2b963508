import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { findOptOutLink, isOptedOut, optOut } from '../../db/opt-outs.js';
import { escapeHtml, page } from '../../domain/html.js';
import { maskedNumber } from '../../domain/phone.js';
import type { ApiDeps } from '../deps.js';

const notFound = page(
  'Link not found',
  '<h1>Link not found</h1><p>This opt-out link is not valid. Check that it was copied in full.</p>',
);

function done(workspaceName: string) {
  return page(
    'Unsubscribed',
    `<h1>You are unsubscribed</h1><p>You will no longer receive marketing messages from <strong>${escapeHtml(workspaceName)}</strong>. Messages you need, such as codes and receipts, still arrive.</p>`,
  );
}

/**
 * The `{opt_out_url}` link of marketing messages. Opening it only shows a confirmation page:
 * link previews and scanners open links too, so only the form's POST records the opt-out.
 */
export const optOutRoutes: FastifyPluginAsyncZod<{ deps: ApiDeps }> = async (app, { deps }) => {
  await app.register(formbody);
  const params = z.object({ token: z.string().max(64) });

  app.get('/o/:token', { schema: { hide: true, params } }, async (request, reply) => {
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
    const link = await findOptOutLink(deps.sql, request.params.token);
    if (!link) return reply.code(404).send(notFound);
    if (await isOptedOut(deps.sql, link.workspaceId, link.recipient))
      return reply.send(done(link.workspaceName));
    return reply.send(
      page(
        'Unsubscribe',
        `<h1>Unsubscribe</h1><p>Stop marketing messages from <strong>${escapeHtml(link.workspaceName)}</strong> to ${escapeHtml(maskedNumber(link.recipient))}?</p>
<form method="post"><button type="submit">Unsubscribe</button></form>`,
      ),
    );
  });

  app.post('/o/:token', { schema: { hide: true, params } }, async (request, reply) => {
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
    const link = await findOptOutLink(deps.sql, request.params.token);
    if (!link) return reply.code(404).send(notFound);
    await optOut(deps.sql, link.workspaceId, link.recipient, 'link');
    return reply.send(done(link.workspaceName));
  });
};

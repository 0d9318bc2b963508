/** Quick Send: recipients, message with its live counter, purpose, sender id, routing; then the batch's status. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  measureMessage,
  recipientLines,
  sendQuickSend,
} from '../../commands/messaging/quick-send.js';
import type { ConsoleContext } from '../context.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, redirect, text } from '../http.js';
import { readSendLater, SEND_LATER_ZONES, sendLaterField } from '../send-later.js';

/** The REST fields, as this form calls them. */
const FORM_FIELDS: Record<string, string> = {
  recipients: 'recipients',
  message: 'message',
  message_purpose: 'purpose',
  sender_id: 'sender_id',
  routing_type: 'routing',
  provider_slug: 'provider',
  failover_route_slug: 'failover_route',
  reference: 'reference',
  send_at: 'send_at',
};

export async function quickSendRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  const page = (
    reply: FastifyReply,
    _signedIn: SignedIn,
    status: number,
    form: Form,
    errors: Record<string, string[]> = {},
  ) =>
    reply.page(
      'quick-send',
      {
        title: 'Quick Send',
        form,
        errors,
        measure: measureMessage(text(form, 'message') ?? ''),
        recipientCount: recipientLines(text(form, 'recipients') ?? '').length,
        zones: SEND_LATER_ZONES,
        sendLater: sendLaterField(
          'send-later',
          { send_at: text(form, 'send_at'), send_at_zone: text(form, 'send_at_zone') },
          errors.send_at ?? [],
        ),
      },
      status,
    );

  app.get('/quick-send', { config: { action: 'quick_send.send' } }, async (request, reply) => {
    const signedIn = request.member;
    return page(reply, signedIn, 200, { routing: 'own', purpose: 'transactional' });
  });

  // The counter under the message box, asked for by htmx as the message changes.
  app.get<{ Querystring: { message?: string } }>(
    '/quick-send/measure',
    { config: { action: 'quick_send.send' } },
    async (request, reply) => {
      const _signedIn = request.member;
      const message = typeof request.query.message === 'string' ? request.query.message : '';
      return reply.page('message-measure', { title: 'Counter', measure: measureMessage(message) });
    },
  );

  app.post('/quick-send', { config: { action: 'quick_send.send' } }, async (request, reply) => {
    const signedIn = request.member;
    const form = formOf(request);
    const later = readSendLater(text(form, 'send_at'), text(form, 'send_at_zone'));
    if (!later.ok) return page(reply, signedIn, 422, form, { send_at: [later.error] });
    const result = await sendQuickSend(deps, signedIn.actor, signedIn.visitor.workspaceId, {
      recipients: text(form, 'recipients'),
      message: text(form, 'message'),
      purpose: text(form, 'purpose'),
      senderId: text(form, 'sender_id'),
      routing: text(form, 'routing'),
      provider: text(form, 'provider'),
      failoverRoute: text(form, 'failover_route'),
      reference: text(form, 'reference'),
      sendAt: later.sendAt,
    });
    if (result.outcome === 'invalid') {
      const errors: Record<string, string[]> = {};
      for (const [field, messages] of Object.entries(result.errors)) {
        const name = FORM_FIELDS[field] ?? 'form';
        errors[name] = [...(errors[name] ?? []), ...messages];
      }
      return page(reply, signedIn, 422, form, errors);
    }
    return redirect(request, reply, `${signedIn.base}/batches/${result.campaignId}`);
  });
}

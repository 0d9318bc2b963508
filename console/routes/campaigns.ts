/**
 * Campaigns: the workspace's named campaigns and Quick Send / API batches, filtered by status,
 * source and period, a page at a time; and the form that creates a named campaign with the
 * use-case `herald campaign create` runs.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { listBatches } from '../../commands/console/batches.js';
import { InputError } from '../../commands/input.js';
import { dispatchCampaign } from '../../commands/messaging/dispatch-campaign.js';
import {
  createNamedCampaign,
  type PreviewedMessage,
  previewNamedCampaign,
} from '../../commands/messaging/named-campaigns.js';
import { recipientLines } from '../../commands/messaging/quick-send.js';
import { can } from '../access.js';
import {
  BATCH_SOURCES,
  BATCH_STATUSES,
  FIRST_FILTER_DAY,
  type FilterForm,
  LAST_FILTER_DAY,
  pageHref,
  readCampaignQuery,
} from '../campaign-filters.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, redirect, text } from '../http.js';
import { readSendLater, SEND_LATER_ZONES, sendLaterField } from '../send-later.js';

/** The use-case's input fields, as this form labels them. */
const LABELS: Record<string, string> = {
  name: 'Name',
  recipients: 'Recipients',
  body: 'Message',
  purpose: 'Purpose',
  senderId: 'Sender id',
  provider: 'Provider',
  failoverRoute: 'Failover route',
  variables: 'Variables',
  sendAt: 'Send later',
};

/** The first messages a preview shows. */
const PREVIEWED_MESSAGES = 3;

export async function campaignRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  app.get('/campaigns', { config: { action: 'batches.view' } }, async (request, reply) => {
    const signedIn = request.member;
    const query = readCampaignQuery(request.query, new Date());
    const base = {
      title: 'Campaigns',
      nav: signedIn.nav,
      csrf: signedIn.csrf,
      base: signedIn.base,
      statuses: BATCH_STATUSES,
      sources: BATCH_SOURCES,
      filterDays: { first: FIRST_FILTER_DAY, last: LAST_FILTER_DAY },
      canCreate: can(signedIn.visitor, 'campaigns.create'),
      form: query.form,
    };
    if (!query.ok) {
      return reply.page('campaigns', { ...base, errors: query.errors }, 422);
    }
    const page = await listBatches(deps, signedIn.visitor.workspaceId, query.filter, query.cursor);
    const filtered = Object.keys(query.filter).length > 0;
    const cursor = query.cursor;
    return reply.page('campaigns', {
      ...base,
      errors: {},
      batches: page.batches,
      filtered,
      firstPage: query.cursor === undefined,
      // The rows ask for themselves again (this same page) while a batch's figures may move.
      live: page.batches.some((batch) => batch.live),
      hrefs: {
        self: pageHref(
          signedIn.base,
          query.form,
          cursor === undefined
            ? {}
            : 'newerThan' in cursor
              ? { newer_than: cursor.newerThan }
              : { older_than: cursor.olderThan },
        ),
        clear: pageHref(signedIn.base, emptyForm()),
        first: pageHref(signedIn.base, query.form),
        older:
          page.olderThan === null
            ? null
            : pageHref(signedIn.base, query.form, { older_than: page.olderThan }),
        newer:
          page.newerThan === null
            ? null
            : pageHref(signedIn.base, query.form, { newer_than: page.newerThan }),
      },
    });
  });

  const createPage = (
    reply: FastifyReply,
    _signedIn: SignedIn,
    status: number,
    form: Form,
    errors: Record<string, string> = {},
    preview: PreviewedMessage[] | null = null,
  ) =>
    reply.page(
      'campaign-new',
      {
        title: 'Create campaign',
        form,
        errors,
        preview,
        zones: SEND_LATER_ZONES,
        sendLater: sendLaterField(
          'campaign-send-later',
          { send_at: text(form, 'send_at'), send_at_zone: text(form, 'send_at_zone') },
          errors.sendAt ? [errors.sendAt] : [],
        ),
      },
      status,
    );

  /** The first messages as sent, checked by the send's rules; nothing is saved. */
  const previewPage = async (reply: FastifyReply, signedIn: SignedIn, form: Form) => {
    const preview = await orRefusal(async () =>
      previewNamedCampaign(
        deps,
        {
          recipients: recipientLines(text(form, 'recipients') ?? '').map((line) => line.value),
          body: text(form, 'message'),
          purpose: text(form, 'purpose'),
          variables: text(form, 'variables'),
        },
        PREVIEWED_MESSAGES,
      ),
    );
    if (preview instanceof InputError)
      return createPage(reply, signedIn, 422, form, formErrors(preview, LABELS, 'body'));
    return createPage(reply, signedIn, 200, form, {}, preview);
  };

  app.get('/campaigns/new', { config: { action: 'campaigns.create' } }, async (request, reply) => {
    const signedIn = request.member;
    return createPage(reply, signedIn, 200, { purpose: 'transactional' });
  });

  app.post('/campaigns', { config: { action: 'campaigns.create' } }, async (request, reply) => {
    const signedIn = request.member;
    const form = formOf(request);
    if (text(form, 'intent') === 'preview') return previewPage(reply, signedIn, form);
    const workspaceId = signedIn.visitor.workspaceId;
    const later = readSendLater(text(form, 'send_at'), text(form, 'send_at_zone'));
    if (!later.ok) return createPage(reply, signedIn, 422, form, { sendAt: later.error });
    const created = await orRefusal(() =>
      createNamedCampaign(
        deps,
        signedIn.actor,
        {
          workspace: signedIn.visitor.workspaceSlug,
          name: text(form, 'name'),
          recipients: recipientLines(text(form, 'recipients') ?? '').map((line) => line.value),
          body: text(form, 'message'),
          purpose: text(form, 'purpose'),
          senderId: text(form, 'sender_id'),
          provider: text(form, 'provider'),
          failoverRoute: text(form, 'failover_route'),
          variables: text(form, 'variables'),
          sendAt: later.sendAt,
        },
        // Confirmed, or left paused until someone resumes it (`herald campaign resume`).
        ({ id }) => dispatchCampaign(deps, { workspaceId, campaignId: id }),
      ),
    );
    if (created instanceof InputError) {
      return createPage(reply, signedIn, created.status, form, formErrors(created, LABELS, 'name'));
    }
    return redirect(
      request,
      reply,
      `${signedIn.base}/batches/${created.id}?done=${created.dispatched.confirmed ? (later.sendAt ? 'scheduled' : 'created') : 'paused'}`,
    );
  });
}

function emptyForm(): FilterForm {
  return { status: '', source: '', period: '', from: '', to: '' };
}

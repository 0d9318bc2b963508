/**
 * Messaging → Inbox: recipients' replies (other than STOP/START), newest first, numbers masked
 * unless the member has recipients.read; owners and admins set the HELP answer there too
 * (`herald workspace update --help-text` does the same).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import { loadInbox } from '../../commands/messaging/inbox.js';
import { updateWorkspaceSettings } from '../../commands/team/workspaces.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { formOf, redirect, text } from '../http.js';

const FLASH: Record<string, string> = {
  saved: 'Saved: a HELP reply is answered with this text.',
  off: 'Saved: HELP replies are no longer answered.',
};

/** `before` of the list: a reply's id, else the newest page. */
function beforeOf(value: unknown): number | null {
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : null;
}

export async function inboxRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: {
      before?: number | null;
      flash?: string;
      form?: string;
      errors?: Record<string, string>;
    },
  ) {
    const fullNumbers = can(signedIn.visitor, 'inbox.numbers');
    const inbox = await loadInbox(deps, signedIn.visitor.workspaceId, {
      before: extra.before ?? null,
      fullNumbers,
    });
    return reply.page(
      'inbox',
      {
        title: 'Inbox',
        inbox,
        fullNumbers,
        first: (extra.before ?? null) === null,
        canManage: can(signedIn.visitor, 'inbox.manage'),
        helpText: extra.form ?? inbox.helpText ?? '',
        errors: extra.errors ?? {},
        flash: extra.flash,
      },
      status,
    );
  }

  app.get<{ Querystring: { before?: string; done?: string } }>(
    '/inbox',
    { config: { action: 'inbox.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      return page(reply, signedIn, 200, {
        before: beforeOf(request.query.before),
        flash: FLASH[request.query.done ?? ''],
      });
    },
  );

  app.post('/inbox/help-text', { config: { action: 'inbox.manage' } }, async (request, reply) => {
    const signedIn = request.member;
    const given = text(formOf(request), 'help_text')?.trim() ?? '';
    const saved = await orRefusal(() =>
      updateWorkspaceSettings(
        deps,
        {
          slug: signedIn.visitor.workspaceSlug,
          helpText: given === '' ? 'off' : given,
        },
        signedIn.actor,
      ),
    );
    if (saved instanceof InputError)
      return page(reply, signedIn, saved.status, {
        form: given,
        errors: formErrors(saved, { helpText: 'Help text' }, 'helpText'),
      });
    return redirect(
      request,
      reply,
      `${signedIn.base}/inbox?done=${saved.helpText === null ? 'off' : 'saved'}`,
    );
  });
}

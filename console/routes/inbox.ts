/**
 * Messaging → Inbox: recipients' replies (other than STOP/START), newest first, numbers masked
 * unless the member has recipients.read; owners and admins set the HELP answer there too
 * (`herald workspace update --help-text` does the same).
 */
import type { FastifyInstance } from 'fastify';
import { loadInbox } from '../../commands/messaging/inbox.js';
import { updateWorkspaceSettings } from '../../commands/team/workspaces.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formPage } from '../form-page.js';
import { type Form, redirect, text } from '../http.js';

const FLASH: Record<string, string> = {
  saved: 'Saved: a HELP reply is answered with this text.',
  off: 'Saved: HELP replies are no longer answered.',
};

/** `before` of the list: a reply's id, else the newest page. */
function beforeOf(value: unknown): number | null {
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : null;
}

/** The HELP answer as the form gives it: trimmed, blank for none. */
const helpTextOf = (form: Form) => text(form, 'help_text')?.trim() ?? '';

export async function inboxRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  const page = formPage<{ before?: number | null }>({
    view: 'inbox',
    labels: { helpText: 'Help text' },
    fallbackField: 'helpText',
    load: async ({ visitor }, { before = null }) => {
      const fullNumbers = can(visitor, 'inbox.numbers');
      const inbox = await loadInbox(deps, visitor.workspaceId, { before, fullNumbers });
      return {
        title: 'Inbox',
        inbox,
        fullNumbers,
        first: before === null,
        canManage: can(visitor, 'inbox.manage'),
        form: { help_text: inbox.helpText ?? '' },
      };
    },
    shownAgain: (form) => ({ help_text: helpTextOf(form) }),
  });

  app.get<{ Querystring: { before?: string; done?: string } }>(
    '/inbox',
    { config: { action: 'inbox.view' } },
    async (request, reply) =>
      page.show(reply, 200, {
        before: beforeOf(request.query.before),
        flash: FLASH[request.query.done ?? ''],
      }),
  );

  app.post('/inbox/help-text', { config: { action: 'inbox.manage' } }, async (request, reply) =>
    page.submit(reply, {
      run: (form, { visitor, actor }) => {
        const given = helpTextOf(form);
        return updateWorkspaceSettings(
          deps,
          { slug: visitor.workspaceSlug, helpText: given === '' ? 'off' : given },
          actor,
        );
      },
      done: (saved, { base }) =>
        redirect(request, reply, `${base}/inbox?done=${saved.helpText === null ? 'off' : 'saved'}`),
    }),
  );
}

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
import { type Form, idParam, redirect, text } from '../http.js';

const FLASH: Record<string, string> = {
  saved: 'Saved: a HELP reply is answered with this text.',
  off: 'Saved: HELP replies are no longer answered.',
};

/** The HELP answer as the form gives it: trimmed, blank for none. */
const helpTextOf = (form: Form) => text(form, 'help_text')?.trim() ?? '';

export async function inboxRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  // `before`: a reply's id, for the page of older replies; absent, the newest.
  const page = formPage<{ before?: number }>({
    view: 'inbox',
    labels: { helpText: 'Help text' },
    fallbackField: 'helpText',
    load: async ({ visitor }, { before }) => {
      const fullNumbers = can(visitor, 'inbox.numbers');
      const inbox = await loadInbox(deps, visitor.workspaceId, {
        before: before ?? null,
        fullNumbers,
      });
      return {
        title: 'Inbox',
        inbox,
        fullNumbers,
        first: before === undefined,
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
        before: idParam(request.query.before ?? ''),
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

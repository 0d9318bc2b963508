/**
 * Messaging → Opt-outs: the numbers that opted out of this workspace's marketing (a STOP reply,
 * the message's opt-out link, an operator), searched by number, filtered by how, paged; owners
 * and admins undo one. Numbers are masked unless the member has recipients.read.
 */
import type { FastifyInstance } from 'fastify';
import { InputError } from '../../commands/input.js';
import {
  isOptOutSource,
  listWorkspaceOptOuts,
  removeOptOut,
} from '../../commands/messaging/opt-outs.js';
import { OPT_OUT_SOURCES } from '../../db/opt-outs.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, orRefusal } from '../form-errors.js';
import { formOf, idParam, redirect, text } from '../http.js';
import { messagePage } from '../pages.js';

const SOURCE_LABELS: Record<string, string> = {
  reply: 'STOP reply',
  link: 'Opt-out link',
  operator: 'Operator',
};
const LABELS = { search: 'Number', source: 'How' };

export async function optOutRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  app.get<{ Querystring: { q?: string; source?: string; before?: string; done?: string } }>(
    '/opt-outs',
    { config: { action: 'opt_outs.view' } },
    async (request, reply) => {
      const { visitor } = request.member;
      const fullNumbers = can(visitor, 'recipients.view');
      const search = request.query.q?.trim() ?? '';
      const source = request.query.source ?? '';
      const before = idParam(request.query.before ?? '');
      const listed = await orRefusal(() =>
        listWorkspaceOptOuts(deps, visitor.workspaceId, {
          search,
          source,
          ...(before !== undefined && { before }),
          fullNumbers,
        }),
      );
      const refused = listed instanceof InputError;
      const filters = new URLSearchParams({
        ...(search && { q: search }),
        ...(isOptOutSource(source) && { source }),
      });
      return reply.page(
        'opt-outs',
        {
          title: 'Opt-outs',
          listing: refused ? { rows: [], nextBefore: null } : listed,
          errors: refused ? formErrors(listed, LABELS, 'search') : {},
          search,
          source,
          sources: OPT_OUT_SOURCES.map((value) => ({ value, label: SOURCE_LABELS[value] })),
          sourceLabels: SOURCE_LABELS,
          filters: filters.toString(),
          first: before === undefined,
          fullNumbers,
          canUndo: can(visitor, 'opt_outs.undo'),
          flash:
            request.query.done === 'undone'
              ? 'Undone: that number gets marketing messages again.'
              : undefined,
        },
        refused ? listed.status : 200,
      );
    },
  );

  app.post<{ Params: { id: string } }>(
    '/opt-outs/:id/undo',
    { config: { action: 'opt_outs.undo' } },
    async (request, reply) => {
      const { visitor, actor, base, nav, csrf } = request.member;
      const id = idParam(request.params.id);
      const undone = await orRefusal(() =>
        removeOptOut(deps, { workspaceId: visitor.workspaceId, id: id ?? 0 }, actor),
      );
      if (undone instanceof InputError)
        return messagePage(reply, undone.status, {
          title: 'Not undone',
          text: undone.message,
          links: [{ label: 'Opt-outs', href: `${base}/opt-outs` }],
          nav,
          csrf,
        });
      const back = text(formOf(request), 'back');
      const query = back && /^[\w=&%+.-]*$/.test(back) ? `${back}&` : '';
      return redirect(request, reply, `${base}/opt-outs?${query}done=undone`);
    },
  );
}

/**
 * Workspace → Settings: quiet hours for marketing (docs/api.md "Quiet hours"), an owner's or admin's
 * to set; `herald workspace update --quiet-hours` does the same.
 */
import type { FastifyInstance } from 'fastify';
import { workspaceQuietHours } from '../../commands/messaging/quiet-hours.js';
import { updateWorkspaceSettings } from '../../commands/team/workspaces.js';
import { formatQuietHours } from '../../domain/quiet-hours.js';
import type { ConsoleContext } from '../context.js';
import { formPage } from '../form-page.js';
import { type Form, redirect, text } from '../http.js';

const FLASH: Record<string, string> = {
  saved: 'Saved: marketing messages go out only inside the window, in each recipient’s local time.',
  off: 'Saved: no quiet hours; marketing messages go out at once.',
};

interface QuietHoursForm {
  enabled: boolean;
  start: string;
  end: string;
}

function quietHoursForm(form: Form): QuietHoursForm {
  return {
    enabled: text(form, 'enabled') === 'on',
    start: text(form, 'start')?.trim() ?? '',
    end: text(form, 'end')?.trim() ?? '',
  };
}

export async function workspaceSettingsRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  const page = formPage({
    view: 'workspace-settings',
    labels: { quietHours: 'Quiet hours' },
    fallbackField: 'quietHours',
    load: async ({ visitor }) => {
      const current = await workspaceQuietHours(deps, visitor.workspaceId);
      const [start = '09:00', end = '20:00'] = current ? formatQuietHours(current).split('-') : [];
      return { title: 'Settings', form: { enabled: current !== null, start, end } };
    },
    shownAgain: quietHoursForm,
  });

  app.get<{ Querystring: { done?: string } }>(
    '/settings',
    { config: { action: 'settings.manage' } },
    async (request, reply) => page.show(reply, 200, { flash: FLASH[request.query.done ?? ''] }),
  );

  app.post(
    '/settings/quiet-hours',
    { config: { action: 'settings.manage' } },
    async (request, reply) =>
      page.submit(reply, {
        run: (form, { visitor, actor }) => {
          const given = quietHoursForm(form);
          const quietHours = given.enabled ? `${given.start}-${given.end}` : 'off';
          return updateWorkspaceSettings(deps, { slug: visitor.workspaceSlug, quietHours }, actor);
        },
        done: (saved, { base }) =>
          redirect(request, reply, `${base}/settings?done=${saved.quietHours ? 'saved' : 'off'}`),
      }),
  );
}

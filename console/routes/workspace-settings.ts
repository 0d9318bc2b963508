/**
 * Workspace → Settings: quiet hours for marketing (docs/api.md "Quiet hours"), an owner's or admin's
 * to set; `herald workspace update --quiet-hours` does the same.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import { workspaceQuietHours } from '../../commands/messaging/quiet-hours.js';
import { updateWorkspaceSettings } from '../../commands/team/workspaces.js';
import { formatQuietHours } from '../../domain/quiet-hours.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { formOf, redirect, text } from '../http.js';

const FLASH: Record<string, string> = {
  saved: 'Saved: marketing messages go out only inside the window, in each recipient’s local time.',
  off: 'Saved: no quiet hours; marketing messages go out at once.',
};

interface QuietHoursForm {
  enabled: boolean;
  start: string;
  end: string;
}

export async function workspaceSettingsRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: { flash?: string; form?: QuietHoursForm; errors?: Record<string, string> },
  ) {
    const current = await workspaceQuietHours(deps, signedIn.visitor.workspaceId);
    const [start = '09:00', end = '20:00'] = current ? formatQuietHours(current).split('-') : [];
    return reply.page(
      'workspace-settings',
      {
        title: 'Settings',
        quietHours: extra.form ?? { enabled: current !== null, start, end },
        errors: extra.errors ?? {},
        flash: extra.flash,
      },
      status,
    );
  }

  app.get<{ Querystring: { done?: string } }>(
    '/settings',
    { config: { action: 'settings.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      return page(reply, signedIn, 200, { flash: FLASH[request.query.done ?? ''] });
    },
  );

  app.post(
    '/settings/quiet-hours',
    { config: { action: 'settings.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const form = formOf(request);
      const given: QuietHoursForm = {
        enabled: text(form, 'enabled') === 'on',
        start: text(form, 'start')?.trim() ?? '',
        end: text(form, 'end')?.trim() ?? '',
      };
      const quietHours = given.enabled ? `${given.start}-${given.end}` : 'off';
      const saved = await orRefusal(() =>
        updateWorkspaceSettings(
          deps,
          { slug: signedIn.visitor.workspaceSlug, quietHours },
          signedIn.actor,
        ),
      );
      if (saved instanceof InputError)
        return page(reply, signedIn, saved.status, {
          form: given,
          errors: formErrors(saved, { quietHours: 'Quiet hours' }, 'quietHours'),
        });
      return redirect(
        request,
        reply,
        `${signedIn.base}/settings?done=${saved.quietHours ? 'saved' : 'off'}`,
      );
    },
  );
}

/**
 * More services → OTP → Templates: the workspace's message templates (list, create, edit,
 * delete) with the rules of `herald template create`; a template an OTP service sends with is
 * never disabled, made marketing, broken or deleted from under it.
 */

import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import {
  createTemplate,
  deleteTemplate,
  listTemplates,
  showTemplate,
  type TemplateListing,
  updateTemplate,
} from '../../commands/messaging/templates.js';
import { MESSAGE_PURPOSES } from '../../domain/send-request.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, noticeOf, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, redirect, text } from '../http.js';

const LABELS: Record<string, string> = {
  slug: 'Slug',
  name: 'Name',
  body: 'Text',
  purpose: 'Purpose',
  enabled: 'Enabled',
};

const FLASH: Record<string, string> = {
  deleted: 'The template was deleted.',
  updated: 'The template was saved.',
};

/** The edit form's fields filled with the template's current values. */
function formOfTemplate(template: TemplateListing): Form {
  return {
    name: template.name,
    body: template.body,
    purpose: template.purpose,
    enabled: template.enabled ? 'on' : undefined,
  };
}

export async function otpTemplateRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: { form?: Form; errors?: Record<string, string>; flash?: string; created?: string } = {},
  ) {
    const templates = await listTemplates(deps, { workspace: signedIn.visitor.workspaceSlug });
    return reply.page(
      'otp-templates',
      {
        title: 'Templates',
        templates,
        purposes: MESSAGE_PURPOSES,
        canManage: can(signedIn.visitor, 'otp_services.manage'),
        form: extra.form ?? { purpose: 'transactional', enabled: 'on' },
        errors: extra.errors ?? {},
        flash: extra.flash,
        created: extra.created,
      },
      status,
    );
  }

  async function editPage(
    reply: FastifyReply,
    _signedIn: SignedIn,
    status: number,
    template: TemplateListing,
    extra: { form?: Form; errors?: Record<string, string> } = {},
  ) {
    return reply.page(
      'otp-template-edit',
      {
        title: `Edit template ${template.slug}`,
        template,
        purposes: MESSAGE_PURPOSES,
        form: extra.form ?? formOfTemplate(template),
        errors: extra.errors ?? {},
      },
      status,
    );
  }

  /** The template named in the URL, or the list page answering that there is none. */
  async function templateOf(reply: FastifyReply, signedIn: SignedIn, slug: string) {
    const shown = await orRefusal(() =>
      showTemplate(deps, { workspace: signedIn.visitor.workspaceSlug, slug }),
    );
    if (!(shown instanceof InputError)) return shown.template;
    await page(reply, signedIn, shown.status, { errors: noticeOf(shown, LABELS) });
    return undefined;
  }

  app.get<{ Querystring: { done?: string } }>(
    '/otp-templates',
    { config: { action: 'otp_services.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      return page(reply, signedIn, 200, { flash: FLASH[request.query.done ?? ''] });
    },
  );

  app.post(
    '/otp-templates',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const form = formOf(request);
      const created = await orRefusal(() =>
        createTemplate(
          deps,
          {
            workspace: signedIn.visitor.workspaceSlug,
            slug: text(form, 'slug'),
            name: text(form, 'name'),
            body: text(form, 'body'),
            purpose: text(form, 'purpose'),
            enabled: text(form, 'enabled') !== undefined,
          },
          signedIn.actor,
        ),
      );
      if (created instanceof InputError) {
        return page(reply, signedIn, created.status, {
          form,
          errors: formErrors(created, LABELS, 'body'),
        });
      }
      return page(reply, signedIn, 201, { created: created.slug });
    },
  );

  app.get<{ Params: { slug: string } }>(
    '/otp-templates/:slug/edit',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const template = await templateOf(reply, signedIn, request.params.slug);
      if (!template) return reply;
      return editPage(reply, signedIn, 200, template);
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/otp-templates/:slug/edit',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const current = await templateOf(reply, signedIn, request.params.slug);
      if (!current) return reply;
      const form = formOf(request);
      const updated = await orRefusal(() =>
        updateTemplate(
          deps,
          {
            workspace: signedIn.visitor.workspaceSlug,
            slug: current.slug,
            name: text(form, 'name'),
            body: text(form, 'body'),
            purpose: text(form, 'purpose'),
            enabled: text(form, 'enabled') !== undefined,
          },
          signedIn.actor,
        ),
      );
      if (updated instanceof InputError) {
        return editPage(reply, signedIn, updated.status, current, {
          form,
          errors: formErrors(updated, LABELS, 'body'),
        });
      }
      return redirect(request, reply, `${signedIn.base}/otp-templates?done=updated`);
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/otp-templates/:slug/delete',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const deleted = await orRefusal(() =>
        deleteTemplate(
          deps,
          {
            workspace: signedIn.visitor.workspaceSlug,
            slug: request.params.slug,
          },
          signedIn.actor,
        ),
      );
      if (deleted instanceof InputError) {
        return page(reply, signedIn, deleted.status, { errors: noticeOf(deleted, LABELS) });
      }
      return redirect(request, reply, `${signedIn.base}/otp-templates?done=deleted`);
    },
  );
}

/**
 * More services → OTP → Templates: the workspace's message templates (list, create, edit,
 * delete) with the rules of `herald template create`; a template an OTP service sends with is
 * never disabled, made marketing, broken or deleted from under it.
 */

import type { FastifyInstance, FastifyReply } from 'fastify';
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
import { formPage } from '../form-page.js';
import { type Form, redirect, text } from '../http.js';

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

/** The template as the create and edit forms give it. */
function templateInput(form: Form) {
  return {
    name: text(form, 'name'),
    body: text(form, 'body'),
    purpose: text(form, 'purpose'),
    enabled: text(form, 'enabled') !== undefined,
  };
}

export async function otpTemplateRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  const listPage = formPage<{ created?: string }>({
    view: 'otp-templates',
    labels: LABELS,
    fallbackField: 'body',
    load: async ({ visitor }, { created }) => ({
      title: 'Templates',
      templates: await listTemplates(deps, { workspace: visitor.workspaceSlug }),
      purposes: MESSAGE_PURPOSES,
      canManage: can(visitor, 'otp_services.manage'),
      form: { purpose: 'transactional', enabled: 'on' },
      created,
    }),
  });

  const editPage = formPage<{ template: TemplateListing }>({
    view: 'otp-template-edit',
    labels: LABELS,
    fallbackField: 'body',
    load: async (_, { template }) => ({
      title: `Edit template ${template.slug}`,
      template,
      purposes: MESSAGE_PURPOSES,
      form: formOfTemplate(template),
    }),
  });

  /** The template named in the URL, or the list page answering that there is none. */
  const templateOf = async (reply: FastifyReply, slug: string) =>
    (
      await listPage.found(reply, ({ visitor }) =>
        showTemplate(deps, { workspace: visitor.workspaceSlug, slug }),
      )
    )?.template;

  app.get<{ Querystring: { done?: string } }>(
    '/otp-templates',
    { config: { action: 'otp_services.view' } },
    async (request, reply) => listPage.show(reply, 200, { flash: FLASH[request.query.done ?? ''] }),
  );

  app.post('/otp-templates', { config: { action: 'otp_services.manage' } }, async (_, reply) =>
    listPage.submit(reply, {
      run: (form, { visitor, actor }) =>
        createTemplate(
          deps,
          { workspace: visitor.workspaceSlug, slug: text(form, 'slug'), ...templateInput(form) },
          actor,
        ),
      done: (created) => listPage.show(reply, 201, { created: created.slug }),
    }),
  );

  app.get<{ Params: { slug: string } }>(
    '/otp-templates/:slug/edit',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const template = await templateOf(reply, request.params.slug);
      if (!template) return reply;
      return editPage.show(reply, 200, { template });
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/otp-templates/:slug/edit',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const template = await templateOf(reply, request.params.slug);
      if (!template) return reply;
      return editPage.submit(reply, {
        state: { template },
        run: (form, { visitor, actor }) =>
          updateTemplate(
            deps,
            { workspace: visitor.workspaceSlug, slug: template.slug, ...templateInput(form) },
            actor,
          ),
        done: (_, { base }) => redirect(request, reply, `${base}/otp-templates?done=updated`),
      });
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/otp-templates/:slug/delete',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) =>
      listPage.act(reply, {
        run: ({ visitor, actor }) =>
          deleteTemplate(
            deps,
            { workspace: visitor.workspaceSlug, slug: request.params.slug },
            actor,
          ),
        done: (_, { base }) => redirect(request, reply, `${base}/otp-templates?done=deleted`),
      }),
  );
}

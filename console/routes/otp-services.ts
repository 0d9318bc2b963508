/**
 * More services → OTP: saved OTP services (create, edit, delete), the slug to send with
 * `service_slug`. Every rule is the use-case's, as for `herald otp-service`.
 */

import type { FastifyInstance, FastifyReply } from 'fastify';
import { listTemplates } from '../../commands/messaging/templates.js';
import {
  listWorkspaceOtpServices,
  type OtpServiceRecord,
} from '../../commands/otp/service-listing.js';
import {
  createOtpService,
  deleteOtpService,
  type OtpServiceSettingsInput,
  showOtpService,
  updateOtpService,
} from '../../commands/otp/services.js';
import { listRoutingChoices } from '../../commands/providers/routing-choices.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formPage } from '../form-page.js';
import type { SignedIn } from '../guard.js';
import { type Form, redirect, text } from '../http.js';

const LABELS: Record<string, string> = {
  name: 'Name',
  purpose: 'Purpose',
  codeLength: 'Code length',
  expiresInMinutes: 'Lifetime',
  template: 'Template',
  messageTemplate: 'Message',
  senderId: 'Sender id',
  provider: 'Provider',
  slug: 'OTP service',
};

const FLASH: Record<string, string> = {
  deleted: 'The OTP service was deleted. Codes already sent with it still verify.',
  updated: 'The OTP service was saved. Sends with its slug use the new settings from now on.',
};

/** A number field as the use-case takes it: blank is not given, anything else is read (NaN refused there). */
const number = (value: string | undefined) =>
  value === undefined || value.trim() === '' ? undefined : Number(value);

/** An optional setting on the edit form, which shows them all: blank clears it. */
const orNull = (value: string | undefined) =>
  value === undefined || value.trim() === '' ? null : value;

/** The settings as the create form gives them (blank: the default). */
function createdSettings(form: Form): OtpServiceSettingsInput {
  return {
    name: text(form, 'name'),
    purpose: text(form, 'purpose'),
    codeLength: number(text(form, 'code_length')),
    expiresInMinutes: number(text(form, 'expires_in_minutes')),
    template: text(form, 'template'),
    messageTemplate: text(form, 'message_template'),
    senderId: text(form, 'sender_id'),
    provider: text(form, 'provider'),
  };
}

/** The settings as the edit form gives them: the whole service, a blank optional one cleared. */
function editedSettings(form: Form): OtpServiceSettingsInput {
  return {
    ...createdSettings(form),
    template: orNull(text(form, 'template')),
    messageTemplate: orNull(text(form, 'message_template')),
    senderId: orNull(text(form, 'sender_id')),
    provider: orNull(text(form, 'provider')),
  };
}

/** The edit form's fields filled with the service's current settings. */
function formOfService(service: OtpServiceRecord): Form {
  return {
    name: service.name,
    purpose: service.purpose,
    code_length: String(service.codeLength),
    expires_in_minutes: String(service.expiresInMinutes),
    template: service.templateSlug ?? '',
    message_template: service.messageTemplate ?? '',
    sender_id: service.senderId ?? '',
    provider: service.providerSlug ?? '',
  };
}

export async function otpServiceRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  /** What the service form offers: the workspace's transactional templates and providers. */
  async function formChoices({ visitor }: SignedIn) {
    const workspace = visitor.workspaceSlug;
    const [templates, routing] = await Promise.all([
      listTemplates(deps, { workspace }),
      listRoutingChoices(deps, { workspace }),
    ]);
    return {
      templates: templates.filter((template) => template.purpose === 'transactional'),
      providers: routing.providers,
    };
  }

  const listPage = formPage<{ created?: string }>({
    view: 'otp-services',
    labels: LABELS,
    fallbackField: 'name',
    load: async (signedIn, { created }) => ({
      title: 'OTP services',
      services: await listWorkspaceOtpServices(deps, {
        workspace: signedIn.visitor.workspaceSlug,
      }),
      ...(await formChoices(signedIn)),
      canManage: can(signedIn.visitor, 'otp_services.manage'),
      form: { code_length: '6', expires_in_minutes: '5' },
      created,
    }),
  });

  const editPage = formPage<{ service: OtpServiceRecord }>({
    view: 'otp-service-edit',
    labels: LABELS,
    fallbackField: 'name',
    load: async (signedIn, { service }) => ({
      title: `Edit ${service.name}`,
      service,
      ...(await formChoices(signedIn)),
      form: formOfService(service),
    }),
  });

  /** The service named in the URL, or the list page answering that there is none. */
  const serviceOf = async (reply: FastifyReply, slug: string) =>
    (
      await listPage.found(
        reply,
        ({ visitor }) => showOtpService(deps, { workspace: visitor.workspaceSlug, slug }),
        404,
      )
    )?.service;

  app.get<{ Querystring: { done?: string } }>(
    '/otp-services',
    { config: { action: 'otp_services.view' } },
    async (request, reply) => listPage.show(reply, 200, { flash: FLASH[request.query.done ?? ''] }),
  );

  app.post('/otp-services', { config: { action: 'otp_services.manage' } }, async (_, reply) =>
    listPage.submit(reply, {
      run: (form, { visitor, actor }) =>
        createOtpService(
          deps,
          { workspace: visitor.workspaceSlug, ...createdSettings(form) },
          actor,
        ),
      done: (created) => listPage.show(reply, 201, { created: created.service.slug }),
    }),
  );

  app.get<{ Params: { slug: string } }>(
    '/otp-services/:slug/edit',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const service = await serviceOf(reply, request.params.slug);
      if (!service) return reply;
      return editPage.show(reply, 200, { service });
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/otp-services/:slug/edit',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const service = await serviceOf(reply, request.params.slug);
      if (!service) return reply;
      return editPage.submit(reply, {
        state: { service },
        run: (form, { visitor, actor }) =>
          updateOtpService(
            deps,
            { workspace: visitor.workspaceSlug, slug: service.slug, ...editedSettings(form) },
            actor,
          ),
        done: (_, { base }) => redirect(request, reply, `${base}/otp-services?done=updated`),
      });
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/otp-services/:slug/delete',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) =>
      listPage.act(reply, {
        run: ({ visitor, actor }) =>
          deleteOtpService(
            deps,
            { workspace: visitor.workspaceSlug, slug: request.params.slug },
            actor,
          ),
        done: (_, { base }) => redirect(request, reply, `${base}/otp-services?done=deleted`),
      }),
  );
}

/**
 * More services → OTP: saved OTP services (create, edit, delete), the slug to send with
 * `service_slug`. Every rule is the use-case's, as for `herald otp-service`.
 */

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InputError } from '../../commands/input.js';
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
import { formErrors, noticeOf, orRefusal } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, redirect, text } from '../http.js';

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
  async function formChoices(signedIn: SignedIn) {
    const workspace = signedIn.visitor.workspaceSlug;
    const [templates, routing] = await Promise.all([
      listTemplates(deps, { workspace }),
      listRoutingChoices(deps, { workspace }),
    ]);
    return {
      templates: templates.filter((template) => template.purpose === 'transactional'),
      providers: routing.providers,
    };
  }

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: { form?: Form; errors?: Record<string, string>; flash?: string; created?: string } = {},
  ) {
    const services = await listWorkspaceOtpServices(deps, {
      workspace: signedIn.visitor.workspaceSlug,
    });
    return reply.page(
      'otp-services',
      {
        title: 'OTP services',
        services,
        ...(await formChoices(signedIn)),
        canManage: can(signedIn.visitor, 'otp_services.manage'),
        form: extra.form ?? { code_length: '6', expires_in_minutes: '5' },
        errors: extra.errors ?? {},
        flash: extra.flash,
        created: extra.created,
      },
      status,
    );
  }

  async function editPage(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    service: OtpServiceRecord,
    extra: { form?: Form; errors?: Record<string, string> } = {},
  ) {
    return reply.page(
      'otp-service-edit',
      {
        title: `Edit ${service.name}`,
        service,
        ...(await formChoices(signedIn)),
        form: extra.form ?? formOfService(service),
        errors: extra.errors ?? {},
      },
      status,
    );
  }

  /** The service named in the URL, or the list page answering that there is none. */
  async function serviceOf(
    request: FastifyRequest<{ Params: { slug: string } }>,
    reply: FastifyReply,
    signedIn: SignedIn,
  ): Promise<OtpServiceRecord | undefined> {
    const shown = await orRefusal(() =>
      showOtpService(deps, {
        workspace: signedIn.visitor.workspaceSlug,
        slug: request.params.slug,
      }),
    );
    if (!(shown instanceof InputError)) return shown.service;
    await page(reply, signedIn, 404, { errors: noticeOf(shown, LABELS) });
    return undefined;
  }

  app.get<{ Querystring: { done?: string } }>(
    '/otp-services',
    { config: { action: 'otp_services.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      return page(reply, signedIn, 200, { flash: FLASH[request.query.done ?? ''] });
    },
  );

  app.post(
    '/otp-services',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const form = formOf(request);
      const created = await orRefusal(() =>
        createOtpService(
          deps,
          {
            workspace: signedIn.visitor.workspaceSlug,
            ...createdSettings(form),
          },
          signedIn.actor,
        ),
      );
      if (created instanceof InputError) {
        return page(reply, signedIn, created.status, {
          form,
          errors: formErrors(created, LABELS, 'name'),
        });
      }
      return page(reply, signedIn, 201, { created: created.service.slug });
    },
  );

  app.get<{ Params: { slug: string } }>(
    '/otp-services/:slug/edit',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const service = await serviceOf(request, reply, signedIn);
      if (!service) return reply;
      return editPage(reply, signedIn, 200, service);
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/otp-services/:slug/edit',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const current = await serviceOf(request, reply, signedIn);
      if (!current) return reply;
      const form = formOf(request);
      const updated = await orRefusal(() =>
        updateOtpService(
          deps,
          {
            workspace: signedIn.visitor.workspaceSlug,
            slug: current.slug,
            ...editedSettings(form),
          },
          signedIn.actor,
        ),
      );
      if (updated instanceof InputError) {
        return editPage(reply, signedIn, updated.status, current, {
          form,
          errors: formErrors(updated, LABELS, 'name'),
        });
      }
      return redirect(request, reply, `${signedIn.base}/otp-services?done=updated`);
    },
  );

  app.post<{ Params: { slug: string } }>(
    '/otp-services/:slug/delete',
    { config: { action: 'otp_services.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const deleted = await orRefusal(() =>
        deleteOtpService(
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
      return redirect(request, reply, `${signedIn.base}/otp-services?done=deleted`);
    },
  );
}

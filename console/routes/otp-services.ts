/** More services → OTP: saved OTP services (create, delete), the slug to send with `service_slug`. */

import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import { listWorkspaceOtpServices } from '../../commands/otp-service-listing.js';
import { createOtpService, deleteOtpService } from '../../commands/otp-services.js';
import { can } from '../access.js';
import { audit } from '../audit.js';
import type { ConsoleContext } from '../context.js';
import { formErrors } from '../form-errors.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, redirect, sendHtml, text } from '../http.js';
import { render } from '../views.js';

const LABELS: Record<string, string> = {
  name: 'Name',
  purpose: 'Purpose',
  codeLength: 'Code length',
  expiresInMinutes: 'Lifetime',
  template: 'Template',
  messageTemplate: 'Message',
  senderId: 'Sender id',
  provider: 'Provider',
};

/** A number field as the use-case takes it: blank is not given, anything else is read (NaN refused there). */
const number = (value: string | undefined) =>
  value === undefined || value.trim() === '' ? undefined : Number(value);

export async function otpServiceRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps, guard } = context;

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: { form?: Form; errors?: Record<string, string>; flash?: string; created?: string } = {},
  ) {
    const services = await listWorkspaceOtpServices(deps, {
      workspace: signedIn.visitor.workspaceSlug,
    });
    return sendHtml(
      reply,
      status,
      render('otp-services', {
        title: 'OTP services',
        nav: signedIn.nav,
        csrf: signedIn.csrf,
        base: signedIn.base,
        services,
        canManage: can(signedIn.visitor, 'otp_services.manage'),
        form: extra.form ?? { code_length: '6', expires_in_minutes: '5' },
        errors: extra.errors ?? {},
        flash: extra.flash,
        created: extra.created,
      }),
    );
  }

  app.get<{ Querystring: { done?: string } }>('/otp-services', async (request, reply) => {
    const signedIn = await guard(request, reply, 'otp_services.view');
    if (!signedIn) return reply;
    return page(reply, signedIn, 200, {
      flash:
        request.query.done === 'deleted'
          ? 'The OTP service was deleted. Codes already sent with it still verify.'
          : undefined,
    });
  });

  app.post('/otp-services', async (request, reply) => {
    const signedIn = await guard(request, reply, 'otp_services.manage');
    if (!signedIn) return reply;
    const form = formOf(request);
    try {
      const { service } = await createOtpService(deps, {
        workspace: signedIn.visitor.workspaceSlug,
        name: text(form, 'name'),
        purpose: text(form, 'purpose'),
        codeLength: number(text(form, 'code_length')),
        expiresInMinutes: number(text(form, 'expires_in_minutes')),
        messageTemplate: text(form, 'message_template'),
        senderId: text(form, 'sender_id'),
        provider: text(form, 'provider'),
      });
      await audit(
        deps,
        request,
        signedIn.visitor,
        'otp_service.created',
        `OTP service ${service.name}`,
        {
          slug: service.slug,
        },
      );
      return page(reply, signedIn, 201, { created: service.slug });
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      return page(reply, signedIn, error.status, {
        form,
        errors: formErrors(error, LABELS, 'name'),
      });
    }
  });

  app.post<{ Params: { slug: string } }>('/otp-services/:slug/delete', async (request, reply) => {
    const signedIn = await guard(request, reply, 'otp_services.manage');
    if (!signedIn) return reply;
    try {
      await deleteOtpService(deps, {
        workspace: signedIn.visitor.workspaceSlug,
        slug: request.params.slug,
      });
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      return page(reply, signedIn, error.status, { errors: { delete: error.message } });
    }
    await audit(
      deps,
      request,
      signedIn.visitor,
      'otp_service.deleted',
      `OTP service ${request.params.slug}`,
    );
    return redirect(request, reply, `${signedIn.base}/otp-services?done=deleted`);
  });
}

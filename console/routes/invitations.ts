/** An invitation's link: set a password (or sign in) and join the workspace with the invited role. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findConsoleSession, startConsoleSession } from '../../commands/console/sessions.js';
import { InputError } from '../../commands/input.js';
import {
  acceptAsExistingUser,
  acceptWithNewAccount,
  findInvitation,
  type OpenInvitation,
} from '../../commands/team/accept-invitation.js';
import type { ConsoleContext } from '../context.js';
import { formErrors } from '../form-errors.js';
import { clientAddress, formOf, redirect, text, userAgent } from '../http.js';
import { csrfRefusal, messagePage } from '../pages.js';
import { formToken, hasValidFormToken, setSessionCookie } from '../session.js';

const LABELS: Record<string, string> = {
  password: 'Password',
  passwordConfirmation: 'The repeated password',
};

export async function invitationRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps, cookies, secondFactor } = context;

  const page = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    invitation: OpenInvitation,
    problem: { error?: string; errors?: Record<string, string> } = {},
  ) =>
    reply.page(
      'invitation',
      {
        title: `Join ${invitation.workspaceName}`,
        invitation,
        formToken: formToken(request, reply, cookies),
        error: problem.error,
        errors: problem.errors ?? {},
      },
      status,
    );

  const unusable = (reply: FastifyReply) =>
    messagePage(reply, 404, {
      title: 'Invitation not valid',
      text: 'This invitation link has already been used, was revoked or has expired. Ask the person who invited you for a new one.',
      links: [{ label: 'Sign in', href: '/console/sign-in' }],
    });

  app.get<{ Params: { token: string } }>('/invitations/:token', async (request, reply) => {
    const invitation = await findInvitation(deps, request.params.token);
    if (!invitation) return unusable(reply);
    return page(request, reply, 200, invitation);
  });

  app.post<{ Params: { token: string } }>('/invitations/:token', async (request, reply) => {
    if (!hasValidFormToken(request)) return csrfRefusal(reply);
    const invitation = await findInvitation(deps, request.params.token);
    if (!invitation) return unusable(reply);
    const form = formOf(request);
    const from = { address: clientAddress(request), userAgent: userAgent(request) };
    let userId: number;
    try {
      if (invitation.existingUserId === null) {
        ({ userId } = await acceptWithNewAccount(
          deps,
          invitation,
          {
            password: text(form, 'password'),
            passwordConfirmation: text(form, 'password_confirmation'),
          },
          from,
        ));
      } else {
        const result = await acceptAsExistingUser(deps, invitation, {
          password: text(form, 'password') ?? '',
          ...from,
        });
        if (result.outcome === 'throttled') {
          reply.header('retry-after', String(result.retryAfterSeconds));
          return page(request, reply, 429, invitation, {
            error: 'Too many failed sign-in attempts. Try again later.',
          });
        }
        if (result.outcome === 'busy') {
          reply.header('retry-after', '2');
          return page(request, reply, 503, invitation, {
            error: 'Too many sign-ins are being checked right now. Try again in a moment.',
          });
        }
        if (result.outcome === 'incorrect') {
          return page(request, reply, 401, invitation, {
            errors: { password: 'The password is incorrect.' },
          });
        }
        userId = result.userId;
      }
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      if (error.code === 'conflict')
        return page(request, reply, 409, invitation, { error: error.message });
      return page(request, reply, 422, invitation, {
        errors: formErrors(error, LABELS, 'password'),
      });
    }
    const session = await startConsoleSession(deps, {
      userId,
      workspaceId: invitation.workspaceId,
      secondFactorPending: await secondFactor.enrolled(userId),
      ...from,
    });
    setSessionCookie(reply, session.token, cookies);
    const visitor = await findConsoleSession(deps, session.token);
    if (visitor?.secondFactorPending) return redirect(request, reply, '/console/sign-in/code');
    return redirect(request, reply, `/console/w/${invitation.workspaceSlug}`);
  });
}

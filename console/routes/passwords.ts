/**
 * Passwords in the console: the member changes their own on the profile; an owner or admin issues
 * a member a one-time reset link from Team (shown once, as an invitation link is); the member sets
 * a new password at the link. Every rule and audit line is commands/team/passwords.ts's.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import {
  changeOwnPassword,
  completePasswordReset,
  findPasswordReset,
  issuePasswordReset,
  type OpenPasswordReset,
  RESET_LINK_HOURS,
} from '../../commands/team/passwords.js';
import type { ConsoleContext } from '../context.js';
import { SIGNED_IN } from '../doors.js';
import { formErrors, orRefusal } from '../form-errors.js';
import { clientAddress, formOf, idParam, redirect, text, userAgent } from '../http.js';
import { csrfRefusal, messagePage, tryAgainIn } from '../pages.js';
import { profilePage } from '../profile.js';
import { formToken, hasValidFormToken } from '../session.js';

const LABELS: Record<string, string> = {
  currentPassword: 'Current password',
  password: 'New password',
  passwordConfirmation: 'The repeated password',
};

export async function passwordRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps, cookies } = context;

  app.post(
    '/profile/password',
    { config: { action: SIGNED_IN, beforeEnrolment: true } },
    async (request, reply) => {
      const { visitor, actor } = request.member;
      const form = formOf(request);
      const changed = await orRefusal(() =>
        changeOwnPassword(deps, actor, {
          userId: visitor.userId,
          email: visitor.email,
          address: clientAddress(request),
          workspaceId: visitor.workspaceId,
          keepSessionId: visitor.sessionId,
          currentPassword: text(form, 'current_password'),
          password: text(form, 'password'),
          passwordConfirmation: text(form, 'password_confirmation'),
        }),
      );
      if (changed instanceof InputError)
        return profilePage(deps, reply, changed.status, {
          passwordErrors: formErrors(changed, LABELS, 'password'),
        });
      if (changed.outcome === 'throttled') {
        reply.header('retry-after', String(changed.retryAfterSeconds));
        return profilePage(deps, reply, 429, {
          passwordErrors: {
            currentPassword: `Too many wrong passwords. ${tryAgainIn(changed.retryAfterSeconds)}`,
          },
        });
      }
      if (changed.outcome === 'busy') {
        reply.header('retry-after', '2');
        return profilePage(deps, reply, 503, {
          passwordErrors: {
            currentPassword:
              'Too many passwords are being checked right now. Try again in a moment.',
          },
        });
      }
      return redirect(request, reply, '/console/profile?done=password_changed');
    },
  );

  app.post<{ Params: { id: string } }>(
    '/w/:workspace/team/members/:id/password-reset',
    { config: { action: 'team.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const { visitor, actor } = signedIn;
      const issued = await orRefusal(() =>
        issuePasswordReset(deps, actor, {
          workspaceId: visitor.workspaceId,
          userId: idParam(request.params.id) ?? 0,
          by: { userId: visitor.userId, role: visitor.role },
        }),
      );
      if (issued instanceof InputError)
        return messagePage(reply, issued.status, {
          title: 'Password not reset',
          text: issued.message,
          links: [{ label: 'Team', href: `${signedIn.base}/team` }],
          nav: signedIn.nav,
          csrf: signedIn.csrf,
        });
      return reply.page('password-reset-issued', {
        title: 'Password reset link',
        email: issued.email,
        hours: RESET_LINK_HOURS,
        link: `${deps.publicUrl}/console/password-reset/${issued.token}`,
      });
    },
  );

  const unusable = (reply: FastifyReply) =>
    messagePage(reply, 404, {
      title: 'Reset link not valid',
      text: 'This password reset link has already been used, was replaced by a newer one or has expired. Ask an owner or admin of your workspace for a new one.',
      links: [{ label: 'Sign in', href: '/console/sign-in' }],
    });

  const resetPage = (
    request: Parameters<typeof formToken>[0],
    reply: FastifyReply,
    reset: OpenPasswordReset,
    status: number,
    errors: Record<string, string> = {},
  ) =>
    reply.page(
      'password-reset',
      {
        title: 'Set a new password',
        email: reset.email,
        formToken: formToken(request, reply, cookies),
        errors,
      },
      status,
    );

  app.get<{ Params: { token: string } }>('/password-reset/:token', async (request, reply) => {
    const reset = await findPasswordReset(deps, request.params.token);
    if (!reset) return unusable(reply);
    return resetPage(request, reply, reset, 200);
  });

  app.post<{ Params: { token: string } }>('/password-reset/:token', async (request, reply) => {
    if (!hasValidFormToken(request)) return csrfRefusal(reply);
    const reset = await findPasswordReset(deps, request.params.token);
    if (!reset) return unusable(reply);
    const form = formOf(request);
    const done = await orRefusal(() =>
      completePasswordReset(deps, reset, {
        password: text(form, 'password'),
        passwordConfirmation: text(form, 'password_confirmation'),
        address: clientAddress(request),
        userAgent: userAgent(request),
      }),
    );
    if (done instanceof InputError) {
      if (done.code !== 'validation_failed') return unusable(reply);
      return resetPage(request, reply, reset, done.status, formErrors(done, LABELS, 'password'));
    }
    return messagePage(reply, 200, {
      title: 'Password set',
      text: `The new password of ${reset.email} is set, and every browser that was signed in to the account is signed out.`,
      links: [{ label: 'Sign in', href: '/console/sign-in' }],
    });
  });
}

/**
 * The TOTP second factor: the code after the password, enrolment from the profile and turning it
 * off again, an owner's requirement, and an owner's or admin's reset of a member's factor.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { findConsoleSession } from '../../commands/console/sessions.js';
import { InputError } from '../../commands/input.js';
import {
  beginTotpEnrolment,
  confirmTotpEnrolment,
  disableTotp,
  requireSecondFactor,
  resetMemberSecondFactor,
  signInWithSecondFactor,
} from '../../commands/team/totp.js';
import type { ConsoleContext } from '../context.js';
import { SIGNED_IN } from '../doors.js';
import { orRefusal } from '../form-errors.js';
import { memberActor } from '../guard.js';
import { clientAddress, formOf, redirect, text } from '../http.js';
import { csrfRefusal, tryAgainIn } from '../pages.js';
import { profilePage } from '../profile.js';
import { csrfTokenFor, hasValidCsrf, sessionToken } from '../session.js';

export async function secondFactorRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  const codePage = (reply: FastifyReply, status: number, csrf: string, error?: string) =>
    reply.page('sign-in-code', { title: 'Verification code', formToken: csrf, error }, status);

  app.get('/sign-in/code', async (request, reply) => {
    const token = sessionToken(request);
    const visitor = await findConsoleSession(deps, token);
    if (!token || !visitor) return redirect(request, reply, '/console/sign-in');
    if (!visitor.secondFactorPending)
      return redirect(request, reply, `/console/w/${visitor.workspaceSlug}`);
    return codePage(reply, 200, csrfTokenFor(token));
  });

  app.post('/sign-in/code', async (request, reply) => {
    const token = sessionToken(request);
    const visitor = await findConsoleSession(deps, token);
    if (!token || !visitor) return redirect(request, reply, '/console/sign-in');
    if (!hasValidCsrf(request, token)) return csrfRefusal(reply);
    if (!visitor.secondFactorPending)
      return redirect(request, reply, `/console/w/${visitor.workspaceSlug}`);
    const result = await signInWithSecondFactor(
      deps,
      {
        userId: visitor.userId,
        sessionId: visitor.sessionId,
        workspaceId: visitor.workspaceId,
        code: text(formOf(request), 'code') ?? '',
      },
      memberActor(request, visitor),
    );
    if (result.outcome === 'throttled') {
      reply.header('retry-after', String(result.retryAfterSeconds));
      return codePage(
        reply,
        429,
        csrfTokenFor(token),
        `Too many wrong codes. ${tryAgainIn(result.retryAfterSeconds)}`,
      );
    }
    if (result.outcome === 'incorrect')
      return codePage(
        reply,
        401,
        csrfTokenFor(token),
        'That code is not right. Enter the current code from your authenticator app.',
      );
    return redirect(request, reply, `/console/w/${visitor.workspaceSlug}`);
  });

  app.get<{ Querystring: { done?: string; required?: string } }>(
    '/profile',
    { config: { action: SIGNED_IN, beforeEnrolment: true } },
    async (request, reply) => {
      const { done, required } = request.query;
      return profilePage(deps, reply, 200, { done, required });
    },
  );

  app.post(
    '/profile/totp',
    { config: { action: SIGNED_IN, beforeEnrolment: true } },
    async (request, reply) => {
      const enrolment = await orRefusal(() =>
        beginTotpEnrolment(deps, request.member.visitor.userId),
      );
      if (enrolment instanceof InputError)
        return profilePage(deps, reply, 409, { error: enrolment.message });
      return profilePage(deps, reply, 200, { enrolment, confirming: true });
    },
  );

  app.post(
    '/profile/totp/confirm',
    { config: { action: SIGNED_IN, beforeEnrolment: true } },
    async (request, reply) => {
      const { visitor, actor } = request.member;
      const result = await confirmTotpEnrolment(
        deps,
        {
          userId: visitor.userId,
          email: visitor.email,
          code: text(formOf(request), 'code') ?? '',
          keepSessionId: visitor.sessionId,
          workspaceId: visitor.workspaceId,
        },
        actor,
      );
      if (result.outcome !== 'accepted') {
        if (result.outcome === 'throttled')
          reply.header('retry-after', String(result.retryAfterSeconds));
        return profilePage(deps, reply, result.outcome === 'throttled' ? 429 : 422, {
          confirming: true,
          error:
            result.outcome === 'throttled'
              ? `Too many wrong codes. ${tryAgainIn(result.retryAfterSeconds)}`
              : 'That code is not right. Check the time on your phone and enter the current code.',
        });
      }
      return redirect(request, reply, '/console/profile?done=enrolled');
    },
  );

  app.post<{ Params: { workspace: string } }>(
    '/w/:workspace/security/second-factor',
    { config: { action: 'security.manage', beforeEnrolment: true } },
    async (request, reply) => {
      const { visitor, actor } = request.member;
      const required = text(formOf(request), 'required') === 'true';
      const changed = await orRefusal(() =>
        requireSecondFactor(
          deps,
          { workspaceId: visitor.workspaceId, ownerUserId: visitor.userId, required },
          actor,
        ),
      );
      if (changed instanceof InputError)
        return profilePage(deps, reply, 409, { error: changed.message });
      return redirect(
        request,
        reply,
        `/console/profile?done=${required ? 'required' : 'optional'}`,
      );
    },
  );

  /** Both factors once more: the password and a current code. */
  const DISABLE_REFUSALS = {
    'not-enrolled': { status: 409, text: 'Two-step verification is not on for your account.' },
    'incorrect-password': { status: 422, text: 'The password is incorrect.' },
    'incorrect-code': {
      status: 422,
      text: 'That code is not right. Enter the current code from your authenticator app.',
    },
    busy: {
      status: 503,
      text: 'Too many sign-ins are being checked right now. Try again in a moment.',
    },
  } as const;

  app.post(
    '/profile/totp/disable',
    { config: { action: SIGNED_IN, beforeEnrolment: true } },
    async (request, reply) => {
      const { visitor, actor } = request.member;
      const form = formOf(request);
      const result = await disableTotp(
        deps,
        {
          userId: visitor.userId,
          email: visitor.email,
          password: text(form, 'password') ?? '',
          code: text(form, 'code') ?? '',
          address: clientAddress(request),
          keepSessionId: visitor.sessionId,
          workspaceId: visitor.workspaceId,
        },
        actor,
      );
      if (result.outcome === 'throttled') {
        reply.header('retry-after', String(result.retryAfterSeconds));
        return profilePage(deps, reply, 429, {
          disableError: `Too many failed attempts. ${tryAgainIn(result.retryAfterSeconds)}`,
        });
      }
      if (result.outcome !== 'removed') {
        const refusal = DISABLE_REFUSALS[result.outcome];
        if (result.outcome === 'busy') reply.header('retry-after', '2');
        return profilePage(deps, reply, refusal.status, { disableError: refusal.text });
      }
      return redirect(request, reply, '/console/profile?done=disabled');
    },
  );

  app.post<{ Params: { workspace: string } }>(
    '/w/:workspace/security/second-factor/reset',
    { config: { action: 'team.manage' } },
    async (request, reply) => {
      const { visitor, actor } = request.member;
      const reset = await orRefusal(() =>
        resetMemberSecondFactor(
          deps,
          {
            workspaceId: visitor.workspaceId,
            email: text(formOf(request), 'email') ?? '',
            by: { userId: visitor.userId, role: visitor.role ?? 'viewer' },
          },
          actor,
        ),
      );
      if (reset instanceof InputError)
        return profilePage(deps, reply, reset.status, { error: reset.message });
      return redirect(request, reply, '/console/profile?done=reset');
    },
  );
}

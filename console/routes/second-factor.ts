/** The TOTP second factor: the code after the password, enrolment from the profile, an owner's requirement. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  completeConsoleSecondFactor,
  endOtherConsoleSessions,
  findConsoleSession,
} from '../../commands/console-sessions.js';
import { InputError } from '../../commands/input.js';
import {
  beginTotpEnrolment,
  checkTotpCode,
  requireSecondFactor,
  type TotpEnrolment,
  totpEnrolled,
} from '../../commands/totp.js';
import { can } from '../access.js';
import { audit } from '../audit.js';
import type { ConsoleContext } from '../context.js';
import type { SignedIn } from '../guard.js';
import { formOf, redirect, sendHtml, text } from '../http.js';
import { navigationFor } from '../navigation.js';
import { csrfRefusal } from '../pages.js';
import { csrfTokenFor, hasValidCsrf, sessionToken } from '../session.js';
import { render } from '../views.js';

const DONE: Record<string, string> = {
  enrolled:
    'Two-step verification is on. Other browsers signed in to your account were signed out.',
  required: 'Every member of this workspace now needs two-step verification.',
  optional: 'Two-step verification is optional again in this workspace.',
};

const minutes = (seconds: number) =>
  `${Math.ceil(seconds / 60)} minute${Math.ceil(seconds / 60) === 1 ? '' : 's'}`;

export async function secondFactorRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps, guard } = context;

  const codePage = (reply: FastifyReply, status: number, csrf: string, error?: string) =>
    sendHtml(
      reply,
      status,
      render('sign-in-code', { title: 'Verification code', formToken: csrf, error }),
    );

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
    const result = await checkTotpCode(deps, visitor.userId, text(formOf(request), 'code') ?? '');
    if (result.outcome === 'throttled') {
      reply.header('retry-after', String(result.retryAfterSeconds));
      return codePage(
        reply,
        429,
        csrfTokenFor(token),
        `Too many wrong codes. Try again in ${minutes(result.retryAfterSeconds)}.`,
      );
    }
    if (result.outcome === 'incorrect')
      return codePage(
        reply,
        401,
        csrfTokenFor(token),
        'That code is not right. Enter the current code from your authenticator app.',
      );
    await completeConsoleSecondFactor(deps, visitor.sessionId);
    await audit(deps, request, visitor, 'session.signed_in', null, { second_factor: true });
    return redirect(request, reply, `/console/w/${visitor.workspaceSlug}`);
  });

  async function profile(
    query: { done?: string; required?: string },
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: { enrolment?: TotpEnrolment; error?: string; confirming?: boolean } = {},
  ) {
    return sendHtml(
      reply,
      status,
      render('profile', {
        title: 'Profile',
        nav: navigationFor(signedIn.visitor, '/console/profile'),
        csrf: signedIn.csrf,
        base: signedIn.base,
        visitor: signedIn.visitor,
        enrolled: await totpEnrolled(deps, signedIn.visitor.userId),
        canRequire: can(signedIn.visitor, 'security.manage'),
        flash: DONE[query.done ?? ''],
        required: query.required === '1',
        ...extra,
      }),
    );
  }

  app.get<{ Querystring: { done?: string; required?: string } }>(
    '/profile',
    async (request, reply) => {
      const signedIn = await guard(request, reply, null, { beforeEnrolment: true });
      if (!signedIn) return reply;
      return profile(request.query, reply, signedIn, 200);
    },
  );

  app.post('/profile/totp', async (request, reply) => {
    const signedIn = await guard(request, reply, null, { beforeEnrolment: true });
    if (!signedIn) return reply;
    try {
      const enrolment = await beginTotpEnrolment(deps, signedIn.visitor.userId);
      return profile({}, reply, signedIn, 200, {
        enrolment,
        confirming: true,
      });
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      return profile({}, reply, signedIn, 409, {
        error: error.message,
      });
    }
  });

  app.post('/profile/totp/confirm', async (request, reply) => {
    const signedIn = await guard(request, reply, null, { beforeEnrolment: true });
    if (!signedIn) return reply;
    const { visitor } = signedIn;
    const result = await checkTotpCode(deps, visitor.userId, text(formOf(request), 'code') ?? '', {
      enable: true,
    });
    if (result.outcome !== 'accepted') {
      if (result.outcome === 'throttled')
        reply.header('retry-after', String(result.retryAfterSeconds));
      return profile({}, reply, signedIn, result.outcome === 'throttled' ? 429 : 422, {
        confirming: true,
        error:
          result.outcome === 'throttled'
            ? `Too many wrong codes. Try again in ${minutes(result.retryAfterSeconds)}.`
            : 'That code is not right. Check the time on your phone and enter the current code.',
      });
    }
    await endOtherConsoleSessions(deps, {
      userId: visitor.userId,
      keepSessionId: visitor.sessionId,
    });
    await audit(deps, request, visitor, 'second_factor.enrolled', `user ${visitor.email}`);
    return redirect(request, reply, '/console/profile?done=enrolled');
  });

  app.post<{ Params: { workspace: string } }>(
    '/w/:workspace/security/second-factor',
    async (request, reply) => {
      const signedIn = await guard(request, reply, 'security.manage', { beforeEnrolment: true });
      if (!signedIn) return reply;
      const required = text(formOf(request), 'required') === 'true';
      try {
        await requireSecondFactor(deps, {
          workspaceId: signedIn.visitor.workspaceId,
          ownerUserId: signedIn.visitor.userId,
          required,
        });
      } catch (error) {
        if (!(error instanceof InputError)) throw error;
        return profile({}, reply, signedIn, 409, {
          error: error.message,
        });
      }
      await audit(
        deps,
        request,
        signedIn.visitor,
        required ? 'workspace.second_factor_required' : 'workspace.second_factor_optional',
        `workspace ${signedIn.visitor.workspaceSlug}`,
      );
      return redirect(
        request,
        reply,
        `/console/profile?done=${required ? 'required' : 'optional'}`,
      );
    },
  );
}

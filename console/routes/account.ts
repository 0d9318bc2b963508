/**
 * Signing in and out, switching workspace, the console's front door, and the user's signed-in
 * browsers on their profile (sign one out, or every other one).
 */
import type { FastifyInstance } from 'fastify';
import {
  endConsoleSession,
  endMyConsoleSession,
  endOtherConsoleSessions,
  findConsoleSession,
  listSwitchableWorkspaces,
  signInToConsole,
  switchConsoleWorkspace,
} from '../../commands/console/sessions.js';
import { InputError } from '../../commands/input.js';
import type { ConsoleContext } from '../context.js';
import { SIGNED_IN } from '../doors.js';
import { orRefusal } from '../form-errors.js';
import { memberActor } from '../guard.js';
import { clientAddress, formOf, idParam, redirect, text, userAgent } from '../http.js';
import { csrfRefusal, messagePage, tryAgainIn } from '../pages.js';
import { profilePage } from '../profile.js';
import {
  clearSessionCookie,
  formToken,
  hasValidCsrf,
  hasValidFormToken,
  sessionToken,
  setSessionCookie,
} from '../session.js';

const BUSY_RETRY_AFTER_SECONDS = 2;

/** Only a console path of this site: never an open redirect. */
function safeNext(next: string | undefined): string | undefined {
  return next && /^\/console\/[^/\\]/.test(next) ? next : undefined;
}

export async function accountRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps, cookies, secondFactor } = context;

  app.get('/', async (request, reply) => {
    const visitor = await findConsoleSession(deps, sessionToken(request));
    if (!visitor) return redirect(request, reply, '/console/sign-in');
    if (visitor.secondFactorPending) return redirect(request, reply, '/console/sign-in/code');
    return redirect(request, reply, `/console/w/${visitor.workspaceSlug}`);
  });

  const signInPage = (
    request: Parameters<typeof formToken>[0],
    reply: Parameters<typeof formToken>[1],
    status: number,
    content: { error?: string; notice?: string; email?: string; next?: string },
  ) =>
    reply.page(
      'sign-in',
      {
        title: 'Sign in',
        formToken: formToken(request, reply, cookies),
        email: content.email ?? '',
        next: content.next ?? '',
        error: content.error,
        notice: content.notice,
      },
      status,
    );

  app.get<{ Querystring: { next?: string; signed_out?: string } }>(
    '/sign-in',
    async (request, reply) => {
      const visitor = await findConsoleSession(deps, sessionToken(request));
      if (visitor && !visitor.secondFactorPending)
        return redirect(request, reply, `/console/w/${visitor.workspaceSlug}`);
      return signInPage(request, reply, 200, {
        next: safeNext(request.query.next) ?? '',
        ...(request.query.signed_out === '1' && { notice: 'You are signed out.' }),
      });
    },
  );

  app.post('/sign-in', async (request, reply) => {
    if (!hasValidFormToken(request)) return csrfRefusal(reply);
    const form = formOf(request);
    const email = text(form, 'email') ?? '';
    const next = safeNext(text(form, 'next'));
    const again = (status: number, error: string) =>
      signInPage(request, reply, status, { error, email, next: next ?? '' });
    const result = await signInToConsole(deps, {
      email,
      password: text(form, 'password') ?? '',
      address: clientAddress(request),
      userAgent: userAgent(request),
      secondFactorEnrolled: secondFactor.enrolled,
    });
    switch (result.outcome) {
      case 'throttled':
        reply.header('retry-after', String(result.retryAfterSeconds));
        return again(
          429,
          `Too many failed sign-in attempts. ${tryAgainIn(result.retryAfterSeconds)}`,
        );
      case 'busy':
        reply.header('retry-after', String(BUSY_RETRY_AFTER_SECONDS));
        return again(503, 'Too many sign-ins are being checked right now. Try again in a moment.');
      case 'incorrect':
        return again(401, 'The email or password is incorrect.');
      case 'no-workspace':
        return again(403, 'This account is not an active member of any workspace.');
    }
    setSessionCookie(reply, result.token, cookies);
    const session = await findConsoleSession(deps, result.token);
    if (session?.secondFactorPending) return redirect(request, reply, '/console/sign-in/code');
    return redirect(request, reply, next ?? `/console/w/${result.workspace.slug}`);
  });

  app.post('/sign-out', async (request, reply) => {
    const token = sessionToken(request);
    const visitor = await findConsoleSession(deps, token);
    if (!token || !visitor) {
      clearSessionCookie(reply, cookies);
      return redirect(request, reply, '/console/sign-in');
    }
    if (!hasValidCsrf(request, token)) return csrfRefusal(reply);
    await endConsoleSession(deps, visitor, memberActor(request, visitor));
    clearSessionCookie(reply, cookies);
    return redirect(request, reply, '/console/sign-in?signed_out=1');
  });

  app.get(
    '/workspaces',
    { config: { action: SIGNED_IN, beforeEnrolment: true } },
    async (request, reply) => {
      const signedIn = request.member;
      const workspaces = await listSwitchableWorkspaces(deps, signedIn.visitor.userId);
      return reply.page('workspaces', { title: 'Workspaces', workspaces });
    },
  );

  app.post(
    '/workspaces',
    { config: { action: SIGNED_IN, beforeEnrolment: true } },
    async (request, reply) => {
      const signedIn = request.member;
      const slug = text(formOf(request), 'workspace') ?? '';
      const chosen = await orRefusal(() =>
        switchConsoleWorkspace(
          deps,
          {
            sessionId: signedIn.visitor.sessionId,
            userId: signedIn.visitor.userId,
            workspace: slug,
            from: signedIn.visitor.workspaceSlug,
          },
          signedIn.actor,
        ),
      );
      if (chosen instanceof InputError) {
        return messagePage(reply, 404, {
          title: 'No such workspace',
          text: chosen.message,
          links: [{ label: 'Workspaces', href: '/console/workspaces' }],
          nav: signedIn.nav,
          csrf: signedIn.csrf,
        });
      }
      return redirect(request, reply, `/console/w/${chosen.slug}`);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/profile/sessions/:id/end',
    { config: { action: SIGNED_IN, beforeEnrolment: true } },
    async (request, reply) => {
      const { visitor, actor } = request.member;
      const sessionId = idParam(request.params.id) ?? 0;
      // This browser signs out with the sign-out button, which also clears its cookie.
      if (sessionId === visitor.sessionId)
        return profilePage(deps, reply, 409, {
          error: 'This is the browser you are using: sign it out with "Sign out".',
        });
      const ended = await orRefusal(() =>
        endMyConsoleSession(
          deps,
          { userId: visitor.userId, sessionId, workspaceId: visitor.workspaceId },
          actor,
        ),
      );
      if (ended instanceof InputError)
        return profilePage(deps, reply, ended.status, { error: ended.message });
      return redirect(request, reply, '/console/profile?done=session_ended');
    },
  );

  app.post(
    '/profile/sessions/end-others',
    { config: { action: SIGNED_IN, beforeEnrolment: true } },
    async (request, reply) => {
      const signedIn = request.member;
      const { visitor } = signedIn;
      await endOtherConsoleSessions(
        deps,
        {
          userId: visitor.userId,
          keepSessionId: visitor.sessionId,
          workspaceId: visitor.workspaceId,
        },
        signedIn.actor,
      );
      return redirect(request, reply, '/console/profile?done=others_ended');
    },
  );
}

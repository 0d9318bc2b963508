/**
 * The checks in front of every signed-in page and action, in order: a live session (else the
 * sign-in page), its second factor done, the workspace in the URL being the session's, an active
 * membership, the CSRF token on anything that changes state, and the action's permission.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../commands/actor.js';
import { type ConsoleVisitor, findConsoleSession } from '../commands/console/sessions.js';
import { secondFactorMissing } from '../domain/access.js';
import { type Action, can, refusal } from './access.js';
import type { ConsoleDeps } from './deps.js';
import { clientAddress, redirect, userAgent } from './http.js';
import { type Navigation, navigationFor } from './navigation.js';
import { csrfRefusal, messagePage } from './pages.js';
import {
  type CookieOptions,
  clearSessionCookie,
  csrfTokenFor,
  hasValidCsrf,
  sessionToken,
} from './session.js';

export interface SignedIn {
  visitor: ConsoleVisitor;
  /** The session's CSRF token, for the page's forms. */
  csrf: string;
  nav: Navigation;
  /** `/console/w/<slug>`: where the workspace's pages live. */
  base: string;
  /** Who the use-cases audit a change by: this user, from this browser. */
  actor: Actor;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

export interface GuardOptions {
  /** The page may open before a required second factor is enrolled (the profile's enrolment). */
  beforeEnrolment?: boolean;
}

export type Guard = (
  request: FastifyRequest,
  reply: FastifyReply,
  action: Action | null,
  options?: GuardOptions,
) => Promise<SignedIn | undefined>;

/** Undefined when the guard has answered the request itself (a redirect or a refusal). */
export function createGuard(deps: ConsoleDeps, cookies: CookieOptions): Guard {
  return async (request, reply, action, options = {}) => {
    const token = sessionToken(request);
    const visitor = await findConsoleSession(deps, token);
    if (!token || !visitor) {
      if (token) clearSessionCookie(reply, cookies);
      const next = SAFE_METHODS.has(request.method)
        ? `?next=${encodeURIComponent(request.url)}`
        : '';
      await redirect(request, reply, `/console/sign-in${next}`);
      return undefined;
    }
    if (visitor.secondFactorPending) {
      await redirect(request, reply, '/console/sign-in/code');
      return undefined;
    }
    const csrf = csrfTokenFor(token);
    const nav = navigationFor(visitor, request.url.split('?')[0] ?? '');
    if (!SAFE_METHODS.has(request.method) && !hasValidCsrf(request, token)) {
      await csrfRefusal(reply);
      return undefined;
    }
    const { workspace } = (request.params ?? {}) as { workspace?: string };
    if (workspace !== undefined && workspace !== visitor.workspaceSlug) {
      await messagePage(reply, 403, {
        title: 'Another workspace',
        text: `This page belongs to the workspace "${workspace}", but this session is signed in to ${visitor.workspaceName}. Switch workspace (if you are a member there) to open it.`,
        links: [
          { label: 'Switch workspace', href: '/console/workspaces' },
          {
            label: `Back to ${visitor.workspaceName}`,
            href: `/console/w/${visitor.workspaceSlug}`,
          },
        ],
        nav,
        csrf,
      });
      return undefined;
    }
    if (visitor.status !== 'active') {
      await messagePage(reply, 403, {
        title: visitor.status === 'suspended' ? 'Membership suspended' : 'Not a member',
        text:
          visitor.status === 'suspended'
            ? `Your membership of ${visitor.workspaceName} is suspended. An owner or admin can restore it.`
            : `You are no longer a member of ${visitor.workspaceName}.`,
        links: [{ label: 'Switch workspace', href: '/console/workspaces' }],
      });
      return undefined;
    }
    if (secondFactorMissing(visitor) && !options.beforeEnrolment) {
      await redirect(request, reply, '/console/profile?required=1');
      return undefined;
    }
    if (action && !can(visitor, action)) {
      await messagePage(reply, 403, { title: 'Not allowed', text: refusal(action), nav, csrf });
      return undefined;
    }
    return {
      visitor,
      csrf,
      nav,
      base: `/console/w/${visitor.workspaceSlug}`,
      actor: memberActor(request, visitor),
    };
  };
}

/** The signed-in user as the actor of what they do, from this request's address and browser. */
export function memberActor(
  request: FastifyRequest,
  user: { userId: number; email: string },
): Actor {
  return {
    kind: 'member',
    userId: user.userId,
    email: user.email,
    address: clientAddress(request),
    userAgent: userAgent(request),
  };
}

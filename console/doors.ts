/**
 * The console's doors, declared once: a route names the action it performs in its config
 * (`config: { action: 'campaigns.read' }`), one preHandler runs the guard for it and hands the
 * handler the signed-in member, and `reply.page(view, data)` frames the page (title, nav, csrf,
 * base). Routes without an action are public (sign-in, invitations, assets).
 */
import type { FastifyInstance } from 'fastify';
import type { Action } from './access.js';
import type { Guard, SignedIn } from './guard.js';
import { sendHtml } from './http.js';
import { render } from './views.js';

/** Any signed-in member of the session's workspace, whatever their permissions. */
export const SIGNED_IN = 'signed-in';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the route does, checked before its handler runs; absent on public routes. */
    action?: Action | typeof SIGNED_IN;
    /** The page may open before a required second factor is enrolled (the profile's enrolment). */
    beforeEnrolment?: boolean;
  }
  interface FastifyRequest {
    /** The signed-in member: set on every route that declares an action. */
    member: SignedIn;
  }
  interface FastifyReply {
    /** The view in the console's layout, framed for the signed-in member when there is one. */
    page(
      view: string,
      data: { title: string } & Record<string, unknown>,
      status?: number,
    ): FastifyReply;
  }
}

export function installDoors(app: FastifyInstance, guard: Guard): void {
  app.decorateRequest('member', null as unknown as SignedIn);
  app.decorateReply('page', function page(this, view, data, status = 200) {
    const member = this.request.member;
    const frame = member ? { nav: member.nav, csrf: member.csrf, base: member.base } : {};
    return sendHtml(this, status, render(view, { ...frame, ...data }));
  });
  app.addHook('preHandler', async (request, reply) => {
    const { action, beforeEnrolment } = request.routeOptions.config;
    if (action === undefined) return;
    const member = await guard(request, reply, action === SIGNED_IN ? null : action, {
      beforeEnrolment: beforeEnrolment === true,
    });
    if (!member) return reply;
    request.member = member;
  });
}

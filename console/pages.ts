/** Pages every route may answer with: refusals and notices, signed in or not. */
import type { FastifyReply } from 'fastify';
import { sendHtml } from './http.js';
import type { Navigation } from './navigation.js';
import { render } from './views.js';

export interface Link {
  label: string;
  href: string;
}

export function messagePage(
  reply: FastifyReply,
  status: number,
  content: { title: string; text: string; links?: Link[]; nav?: Navigation; csrf?: string },
) {
  return sendHtml(
    reply,
    status,
    render('message', {
      title: content.title,
      heading: content.title,
      text: content.text,
      links: content.links ?? [],
      ...(content.nav && { nav: content.nav, csrf: content.csrf }),
    }),
  );
}

/** A state-changing request without its session's token: nothing was done. */
export function csrfRefusal(reply: FastifyReply) {
  return messagePage(reply, 403, {
    title: 'Request refused',
    text: 'This form was not sent by a page of your current Herald session (its security token is missing or wrong), so nothing was changed. Go back, reload the page and try again.',
    links: [{ label: 'Open the console', href: '/console' }],
  });
}

/** When a throttled user may try again, in words: `Try again in 2 minutes.` */
export function tryAgainIn(seconds: number): string {
  const minutes = Math.ceil(seconds / 60);
  return `Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

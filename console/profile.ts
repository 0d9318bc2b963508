/**
 * The profile page, drawn by the routes that act on it (console/routes/second-factor.ts, the
 * second factor; console/routes/account.ts, the signed-in sessions): the user's two-step
 * verification, their signed-in browsers, and for owners and admins the workspace's security.
 */
import type { FastifyReply } from 'fastify';
import { listMyConsoleSessions } from '../commands/console/sessions.js';
import {
  listWorkspaceSecondFactors,
  secondFactorResetRefusal,
  type TotpEnrolment,
  totpEnrolled,
} from '../commands/team/totp.js';
import { can } from './access.js';
import type { ConsoleDeps } from './deps.js';
import { sendHtml } from './http.js';
import { navigationFor } from './navigation.js';
import { qrCodeSvg } from './qr-code.js';
import { render } from './views.js';

/** What `?done=` says after an action on the page. */
const DONE: Record<string, string> = {
  enrolled:
    'Two-step verification is on. Other browsers signed in to your account were signed out.',
  disabled:
    'Two-step verification is off. Other browsers signed in to your account were signed out.',
  required: 'Every member of this workspace now needs two-step verification.',
  optional: 'Two-step verification is optional again in this workspace.',
  session_ended: 'That browser is signed out.',
  others_ended: 'Every other browser signed in to your account is signed out.',
  reset: "The member's two-step verification was reset, and their browsers were signed out.",
  password_changed:
    'Your password is changed. Other browsers signed in to your account were signed out.',
};

export interface ProfileShown {
  /** What `?done=` says after an action on the page. */
  done?: string;
  /** `?required=1`: the workspace requires a second factor the user has not enrolled. */
  required?: string;
  enrolment?: TotpEnrolment;
  confirming?: boolean;
  /** A refusal shown at the top of the page. */
  error?: string;
  /** A refusal of the turn-off form, shown in it. */
  disableError?: string;
  /** The change-password form's refusal, under the field it concerns. */
  passwordErrors?: Record<string, string>;
}

/** The profile of the member signed in for the reply's request (console/doors.ts). */
export async function profilePage(
  deps: ConsoleDeps,
  reply: FastifyReply,
  status: number,
  { done, required, ...extras }: ProfileShown = {},
) {
  const signedIn = reply.request.member;
  const { visitor } = signedIn;
  const canReset = can(visitor, 'team.manage');
  const [enrolled, sessions, members] = await Promise.all([
    totpEnrolled(deps, visitor.userId),
    listMyConsoleSessions(deps, visitor.userId),
    canReset
      ? listWorkspaceSecondFactors(deps, {
          workspaceId: visitor.workspaceId,
          byUserId: visitor.userId,
        })
      : [],
  ]);
  return sendHtml(
    reply,
    status,
    render('profile', {
      title: 'Profile',
      nav: navigationFor(visitor, '/console/profile'),
      csrf: signedIn.csrf,
      base: signedIn.base,
      visitor,
      enrolled,
      canRequire: can(visitor, 'security.manage'),
      // The reset's own rule, so the button shows exactly when the reset would be allowed.
      members: members.map((member) => ({
        ...member,
        resettable: member.enrolled && !secondFactorResetRefusal(visitor, member),
      })),
      canReset,
      sessions,
      flash: DONE[done ?? ''],
      required: required === '1',
      passwordErrors: {},
      ...extras,
      // The set-up key as a QR code for the authenticator app's camera.
      enrolmentQr:
        extras.enrolment &&
        qrCodeSvg(extras.enrolment.uri, 'QR code of the key, for an authenticator app to scan'),
    }),
  );
}

/**
 * Team → a member's permissions: grant or revoke one at a time, through the use-case of
 * `herald member update --grant/--revoke` (commands/team/members.ts). The member's next request reads
 * the new set (console/guard.ts, mcp/access.ts); nothing is cached anywhere.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
import { listWorkspaceMembers, updateWorkspaceMember } from '../../commands/team/members.js';
import { isPermission, PERMISSIONS, ROLE_PERMISSIONS } from '../../domain/access.js';
import type { ConsoleContext } from '../context.js';
import type { SignedIn } from '../guard.js';
import { formOf, redirect, text } from '../http.js';
import { grantRefusal, PERMISSION_NOTES, permissionEditRefusal } from '../member-permissions.js';
import { messagePage } from '../pages.js';

type Member = Awaited<ReturnType<typeof listWorkspaceMembers>>['members'][number];
type Params = { userId: string };

const CHANGES = ['grant', 'revoke'] as const;

export async function memberPermissionRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  /** The member of the workspace the URL names, or undefined. */
  async function memberOf(signedIn: SignedIn, userId: string): Promise<Member | undefined> {
    if (!/^\d{1,15}$/.test(userId)) return undefined;
    const { members } = await listWorkspaceMembers(deps, {
      workspace: signedIn.visitor.workspaceSlug,
    });
    return members.find((member) => member.userId === Number(userId));
  }

  function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    member: Member,
    extra: { error?: string; flash?: string } = {},
  ) {
    const refusal = permissionEditRefusal(signedIn.visitor, member);
    return reply.page(
      'member-permissions',
      {
        title: `Permissions of ${member.email}`,
        member,
        isMe: member.userId === signedIn.visitor.userId,
        refusal,
        permissions: PERMISSIONS.map((permission) => ({
          name: permission,
          note: PERMISSION_NOTES[permission],
          held: member.permissions.includes(permission),
          roleDefault: ROLE_PERMISSIONS[member.role].includes(permission),
          grantable: grantRefusal(signedIn.visitor, permission) === undefined,
        })),
        ...extra,
      },
      status,
    );
  }

  function noSuchMember(reply: FastifyReply, signedIn: SignedIn) {
    return messagePage(reply, 404, {
      title: 'No such member',
      text: 'This workspace has no such member.',
      links: [{ label: 'Back to Team', href: `${signedIn.base}/team` }],
      nav: signedIn.nav,
      csrf: signedIn.csrf,
    });
  }

  app.get<{ Params: Params; Querystring: { done?: string; permission?: string } }>(
    '/team/members/:userId/permissions',
    { config: { action: 'team.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const member = await memberOf(signedIn, request.params.userId);
      if (!member) return noSuchMember(reply, signedIn);
      const { done, permission } = request.query;
      const flash =
        permission && isPermission(permission) && (done === 'granted' || done === 'revoked')
          ? `${permission} was ${done === 'granted' ? 'granted to' : 'revoked from'} ${member.email}; it applies from their next request.`
          : undefined;
      return page(reply, signedIn, 200, member, { flash });
    },
  );

  app.post<{ Params: Params }>(
    '/team/members/:userId/permissions',
    { config: { action: 'team.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const member = await memberOf(signedIn, request.params.userId);
      if (!member) return noSuchMember(reply, signedIn);
      const form = formOf(request);
      const permission = text(form, 'permission') ?? '';
      const change = text(form, 'change');
      if (
        !isPermission(permission) ||
        !(CHANGES as readonly (string | undefined)[]).includes(change)
      )
        return page(reply, signedIn, 422, member, {
          error: 'Choose one of the permissions listed, to grant or to revoke.',
        });
      // Whose permissions one may change, and what one may grant, the use-case decides on the
      // memberships as they are when it writes, not as `member` was read above.
      try {
        // A repeated form (granting what is held) changes nothing and records nothing; the
        // pending invitations a revoked members.read takes with it are recorded too.
        await updateWorkspaceMember(
          deps,
          {
            workspace: signedIn.visitor.workspaceSlug,
            email: member.email,
            ...(change === 'grant' ? { grant: [permission] } : { revoke: [permission] }),
            by: { userId: signedIn.visitor.userId },
          },
          signedIn.actor,
        );
      } catch (error) {
        if (!(error instanceof InputError)) throw error;
        return page(reply, signedIn, error.status, member, {
          error: error.render((field) => field),
        });
      }
      const done = change === 'grant' ? 'granted' : 'revoked';
      return redirect(
        request,
        reply,
        `${signedIn.base}/team/members/${member.userId}/permissions?done=${done}&permission=${permission}`,
      );
    },
  );
}

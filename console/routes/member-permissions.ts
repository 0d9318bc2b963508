/**
 * Team → a member's permissions: grant or revoke one at a time, through the use-case of
 * `herald member update --grant/--revoke` (commands/team/members.ts). The member's next request reads
 * the new set (console/guard.ts, mcp/access.ts); nothing is cached anywhere.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { listWorkspaceMembers, updateWorkspaceMember } from '../../commands/team/members.js';
import { isPermission, PERMISSIONS, ROLE_PERMISSIONS } from '../../domain/access.js';
import type { ConsoleContext } from '../context.js';
import { formPage } from '../form-page.js';
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

  const page = formPage<{ member: Member }>({
    view: 'member-permissions',
    load: async ({ visitor }, { member }) => ({
      title: `Permissions of ${member.email}`,
      member,
      isMe: member.userId === visitor.userId,
      refusal: permissionEditRefusal(visitor, member),
      permissions: PERMISSIONS.map((permission) => ({
        name: permission,
        note: PERMISSION_NOTES[permission],
        held: member.permissions.includes(permission),
        roleDefault: ROLE_PERMISSIONS[member.role].includes(permission),
        grantable: grantRefusal(visitor, permission) === undefined,
      })),
    }),
  });

  /** The member of the workspace the URL names; undefined once a 404 page said there is none. */
  async function memberOf(reply: FastifyReply, userId: string): Promise<Member | undefined> {
    const signedIn = reply.request.member;
    const { members } = await listWorkspaceMembers(deps, {
      workspace: signedIn.visitor.workspaceSlug,
    });
    const member = /^\d{1,15}$/.test(userId)
      ? members.find((candidate) => candidate.userId === Number(userId))
      : undefined;
    if (member) return member;
    await messagePage(reply, 404, {
      title: 'No such member',
      text: 'This workspace has no such member.',
      links: [{ label: 'Back to Team', href: `${signedIn.base}/team` }],
      nav: signedIn.nav,
      csrf: signedIn.csrf,
    });
    return undefined;
  }

  app.get<{ Params: Params; Querystring: { done?: string; permission?: string } }>(
    '/team/members/:userId/permissions',
    { config: { action: 'team.manage' } },
    async (request, reply) => {
      const member = await memberOf(reply, request.params.userId);
      if (!member) return reply;
      const { done, permission } = request.query;
      const flash =
        permission && isPermission(permission) && (done === 'granted' || done === 'revoked')
          ? `${permission} was ${done === 'granted' ? 'granted to' : 'revoked from'} ${member.email}; it applies from their next request.`
          : undefined;
      return page.show(reply, 200, { member, flash });
    },
  );

  app.post<{ Params: Params }>(
    '/team/members/:userId/permissions',
    { config: { action: 'team.manage' } },
    async (request, reply) => {
      const member = await memberOf(reply, request.params.userId);
      if (!member) return reply;
      const form = formOf(request);
      const permission = text(form, 'permission') ?? '';
      const change = text(form, 'change');
      if (
        !isPermission(permission) ||
        !(CHANGES as readonly (string | undefined)[]).includes(change)
      )
        return page.show(reply, 422, {
          member,
          errors: { notice: 'Choose one of the permissions listed, to grant or to revoke.' },
        });
      // Whose permissions one may change, and what one may grant, the use-case decides on the
      // memberships as they are when it writes, not as `member` was read above. A repeated form
      // (granting what is held) changes nothing and records nothing; the pending invitations a
      // revoked members.read takes with it are recorded too.
      return page.act(reply, {
        state: { member },
        run: ({ visitor, actor }) =>
          updateWorkspaceMember(
            deps,
            {
              workspace: visitor.workspaceSlug,
              email: member.email,
              ...(change === 'grant' ? { grant: [permission] } : { revoke: [permission] }),
              by: { userId: visitor.userId },
            },
            actor,
          ),
        done: (_, { base }) =>
          redirect(
            request,
            reply,
            `${base}/team/members/${member.userId}/permissions?done=${change === 'grant' ? 'granted' : 'revoked'}&permission=${permission}`,
          ),
      });
    },
  );
}

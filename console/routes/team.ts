/**
 * Team: members (role, suspend, remove; the last owner protected; each member's permissions on
 * their own page, routes/member-permissions.ts) and invitations (link shown once, revoke).
 */
import type { FastifyInstance } from 'fastify';
import {
  createInvitation,
  listWorkspaceInvitations,
  revokeInvitation,
} from '../../commands/team/invitations.js';
import {
  listWorkspaceMembers,
  removeWorkspaceMember,
  updateWorkspaceMember,
} from '../../commands/team/members.js';
import { ROLES } from '../../domain/access.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formPage } from '../form-page.js';
import { formOf, redirect, text } from '../http.js';
import { permissionEditRefusal } from '../member-permissions.js';

const LABELS: Record<string, string> = { email: 'Email', role: 'Role' };

const DONE: Record<string, string> = {
  updated: 'The member was updated.',
  removed:
    'The member was removed; their AI connections, API keys and pending invitations of this workspace were revoked.',
  revoked: 'The invitation was revoked.',
};

export async function teamRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  // The invitation form's refusals stand under its fields; the others (already invited, only an
  // owner invites an owner, a member's change) are the page's notice.
  const page = formPage<{ invitationLink?: string }>({
    view: 'team',
    labels: LABELS,
    load: async ({ visitor }, { invitationLink }) => {
      const workspace = visitor.workspaceSlug;
      const [{ members }, { invitations }] = await Promise.all([
        listWorkspaceMembers(deps, { workspace }),
        listWorkspaceInvitations(deps, { workspace }),
      ]);
      return {
        title: 'Team',
        members,
        invitations: [...invitations].reverse(),
        roles: ROLES,
        me: visitor,
        canManage: can(visitor, 'team.manage'),
        permissionsEditable: members
          .filter((member) => !permissionEditRefusal(visitor, member))
          .map((member) => member.userId),
        form: { role: 'developer' },
        invitationLink,
      };
    },
  });

  app.get<{ Querystring: { done?: string } }>(
    '/team',
    { config: { action: 'team.view' } },
    async (request, reply) => page.show(reply, 200, { flash: DONE[request.query.done ?? ''] }),
  );

  app.post('/team/invitations', { config: { action: 'team.manage' } }, async (_, reply) =>
    page.submit(reply, {
      // Only an owner invites an owner: the use-case checks it on the membership as locked, and
      // records the visitor as the inviter (their removal or demotion revokes the invitation).
      run: (form, { visitor, actor }) =>
        createInvitation(
          deps,
          {
            workspace: visitor.workspaceSlug,
            email: text(form, 'email'),
            role: text(form, 'role'),
            by: { userId: visitor.userId },
          },
          actor,
        ),
      done: (invitation) =>
        page.show(reply, 201, {
          invitationLink: `${deps.publicUrl}/console/invitations/${invitation.token}`,
        }),
    }),
  );

  app.post<{ Params: { id: string } }>(
    '/team/invitations/:id/revoke',
    { config: { action: 'team.manage' } },
    async (request, reply) => {
      const id = Number(request.params.id);
      const { invitations } = await listWorkspaceInvitations(deps, {
        workspace: request.member.visitor.workspaceSlug,
      });
      if (!invitations.some((invitation) => invitation.id === id))
        return page.show(reply, 404, {
          errors: { notice: 'This workspace has no such invitation.' },
        });
      return page.act(reply, {
        run: ({ actor }) => revokeInvitation(deps, { id }, actor),
        done: (_, { base }) => redirect(request, reply, `${base}/team?done=revoked`),
      });
    },
  );

  app.post('/team/members', { config: { action: 'team.manage' } }, async (request, reply) => {
    const form = formOf(request);
    const email = text(form, 'email') ?? '';
    const action = text(form, 'action');
    const workspace = request.member.visitor.workspaceSlug;
    const { members } = await listWorkspaceMembers(deps, { workspace });
    if (!members.some((member) => member.email === email))
      return page.show(reply, 404, { errors: { notice: 'This workspace has no such member.' } });
    // Only an owner changes an owner or makes one: the use-case refuses it on the memberships as
    // locked for the change (commands/team/members.ts membershipEditRefusal), not as read above.
    return page.act(reply, {
      run: async ({ visitor, actor }) => {
        const by = { userId: visitor.userId };
        if (action === 'remove') {
          await removeWorkspaceMember(deps, { workspace, email, by }, actor);
          return 'removed';
        }
        const change =
          action === 'role'
            ? { role: text(form, 'role') }
            : { status: action === 'suspend' ? 'suspended' : 'active' };
        await updateWorkspaceMember(deps, { workspace, email, ...change, by }, actor);
        return 'updated';
      },
      done: (done, { base }) => redirect(request, reply, `${base}/team?done=${done}`),
    });
  });
}

/**
 * Team: members (role, suspend, remove; the last owner protected; each member's permissions on
 * their own page, routes/member-permissions.ts) and invitations (link shown once, revoke).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { InputError } from '../../commands/input.js';
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
import type { SignedIn } from '../guard.js';
import { type Form, formOf, redirect, text } from '../http.js';
import { permissionEditRefusal } from '../member-permissions.js';

const DONE: Record<string, string> = {
  updated: 'The member was updated.',
  removed:
    'The member was removed; their AI connections, API keys and pending invitations of this workspace were revoked.',
  revoked: 'The invitation was revoked.',
};

export async function teamRoutes(app: FastifyInstance, { context }: { context: ConsoleContext }) {
  const { deps } = context;

  async function page(
    reply: FastifyReply,
    signedIn: SignedIn,
    status: number,
    extra: { invitationLink?: string; error?: string; form?: Form; flash?: string } = {},
  ) {
    const workspace = signedIn.visitor.workspaceSlug;
    const [{ members }, { invitations }] = await Promise.all([
      listWorkspaceMembers(deps, { workspace }),
      listWorkspaceInvitations(deps, { workspace }),
    ]);
    return reply.page(
      'team',
      {
        title: 'Team',
        members,
        invitations: [...invitations].reverse(),
        roles: ROLES,
        me: signedIn.visitor,
        canManage: can(signedIn.visitor, 'team.manage'),
        permissionsEditable: members
          .filter((member) => !permissionEditRefusal(signedIn.visitor, member))
          .map((member) => member.userId),
        form: extra.form ?? { role: 'developer' },
        ...extra,
      },
      status,
    );
  }

  app.get<{ Querystring: { done?: string } }>(
    '/team',
    { config: { action: 'team.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      return page(reply, signedIn, 200, { flash: DONE[request.query.done ?? ''] });
    },
  );

  app.post('/team/invitations', { config: { action: 'team.manage' } }, async (request, reply) => {
    const signedIn = request.member;
    const form = formOf(request);
    const role = text(form, 'role');
    try {
      // Only an owner invites an owner: the use-case checks it on the membership as locked, and
      // records the visitor as the inviter (their removal or demotion revokes the invitation).
      const invitation = await createInvitation(
        deps,
        {
          workspace: signedIn.visitor.workspaceSlug,
          email: text(form, 'email'),
          role,
          by: { userId: signedIn.visitor.userId },
        },
        signedIn.actor,
      );
      return page(reply, signedIn, 201, {
        invitationLink: `${deps.publicUrl}/console/invitations/${invitation.token}`,
      });
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      return page(reply, signedIn, error.status, {
        form,
        error: error.render((field) =>
          field === 'email' ? 'Email' : field === 'role' ? 'Role' : field,
        ),
      });
    }
  });

  app.post<{ Params: { id: string } }>(
    '/team/invitations/:id/revoke',
    { config: { action: 'team.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const id = Number(request.params.id);
      const { invitations } = await listWorkspaceInvitations(deps, {
        workspace: signedIn.visitor.workspaceSlug,
      });
      const invitation = invitations.find((candidate) => candidate.id === id);
      if (!invitation)
        return page(reply, signedIn, 404, { error: 'This workspace has no such invitation.' });
      try {
        await revokeInvitation(deps, { id }, signedIn.actor);
      } catch (error) {
        if (!(error instanceof InputError)) throw error;
        return page(reply, signedIn, error.status, { error: error.message });
      }
      return redirect(request, reply, `${signedIn.base}/team?done=revoked`);
    },
  );

  app.post('/team/members', { config: { action: 'team.manage' } }, async (request, reply) => {
    const signedIn = request.member;
    const form = formOf(request);
    const email = text(form, 'email') ?? '';
    const action = text(form, 'action');
    const workspace = signedIn.visitor.workspaceSlug;
    const { members } = await listWorkspaceMembers(deps, { workspace });
    const target = members.find((member) => member.email === email);
    if (!target) return page(reply, signedIn, 404, { error: 'This workspace has no such member.' });
    const role = action === 'role' ? text(form, 'role') : undefined;
    // Only an owner changes an owner or makes one: the use-case refuses it on the memberships as
    // locked for the change (commands/team/members.ts membershipEditRefusal), not as `target` was read.
    const by = { userId: signedIn.visitor.userId };
    try {
      if (action === 'remove') {
        await removeWorkspaceMember(deps, { workspace, email, by }, signedIn.actor);
        return redirect(request, reply, `${signedIn.base}/team?done=removed`);
      }
      const change =
        action === 'role' ? { role } : { status: action === 'suspend' ? 'suspended' : 'active' };
      await updateWorkspaceMember(deps, { workspace, email, ...change, by }, signedIn.actor);
      return redirect(request, reply, `${signedIn.base}/team?done=updated`);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      return page(reply, signedIn, error.status, { error: error.render((field) => field) });
    }
  });
}

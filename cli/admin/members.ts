/** herald member list|update|remove: options in, use-case, output. */
import {
  listWorkspaceMembers,
  removeWorkspaceMember,
  updateWorkspaceMember,
} from '../../commands/team/members.js';
import type { Member } from '../../db/members.js';
import { type AdminContext, operatorActor } from '../context.js';
import { type CommandResult, listOrEmpty, type Options, run, text } from './options.js';
import { type AdminCommand, oneOf, optional, required } from './table.js';

const presentMember = (member: Member) => ({
  user_id: member.userId,
  email: member.email,
  role: member.role,
  permissions: member.permissions,
  status: member.status,
});

const describeMember = (member: Member) =>
  `${member.email} (user ${member.userId}): ${member.role}, ${member.status}, ` +
  `permissions ${member.permissions.join(', ') || 'none'}`;

/** herald member list --workspace <slug> → {"members": [...]} */
export async function memberList(context: AdminContext, options: Options): Promise<CommandResult> {
  const { members, workspace } = await run(
    listWorkspaceMembers(context, { workspace: text(options, 'workspace') }),
  );
  return {
    json: { members: members.map(presentMember) },
    human: members.length
      ? members.map(describeMember).join('\n')
      : `${workspace.slug} has no members`,
  };
}

/**
 * herald member update --workspace <slug> --email <email> [--role r]
 *   [--permissions a,b | --grant a,b --revoke c] [--status active|suspended] → the member
 */
export async function memberUpdate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { member, invitationsRevoked } = await run(
    updateWorkspaceMember(
      context,
      {
        workspace: text(options, 'workspace'),
        email: text(options, 'email'),
        role: text(options, 'role'),
        permissions: listOrEmpty(options, 'permissions'),
        grant: listOrEmpty(options, 'grant'),
        revoke: listOrEmpty(options, 'revoke'),
        status: text(options, 'status'),
      },
      operatorActor(),
    ),
  );
  const invitations = invitationsRevoked.length;
  return {
    json: presentMember(member),
    human:
      `Updated ${describeMember(member)}` +
      (invitations ? `; revoked ${counted(invitations, 'pending invitation')} they made` : ''),
  };
}

const counted = (count: number, what: string) => `${count} ${what}${count === 1 ? '' : 's'}`;

/** herald member remove --workspace <slug> --email <email> → {"removed": true} */
export async function memberRemove(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const {
    email,
    workspace,
    connectionsRevoked: connections,
    apiKeysRevoked: keys,
    invitationsRevoked,
  } = await run(
    removeWorkspaceMember(
      context,
      {
        workspace: text(options, 'workspace'),
        email: text(options, 'email'),
      },
      operatorActor(),
    ),
  );
  return {
    json: { removed: true },
    human: `Removed ${email} from ${workspace.slug}${revokedAlong({
      'MCP connection': connections,
      'API key': keys,
      'pending invitation': invitationsRevoked.length,
    })}`,
  };
}

/** What the removal revoked with the membership, in words: ` and revoked 1 API key`. */
function revokedAlong(counts: Record<string, number>): string {
  const revoked = Object.entries(counts)
    .filter(([, count]) => count > 0)
    .map(([what, count]) => counted(count, what));
  return revoked.length ? ` and revoked ${revoked.join(' and ')}` : '';
}

export const MEMBER_COMMANDS: AdminCommand[] = [
  { name: 'member list', run: memberList, synopses: [[[required('workspace', '<slug>')]]] },
  {
    name: 'member update',
    run: memberUpdate,
    synopses: [
      [
        [
          required('workspace', '<slug>'),
          required('email', '<email>'),
          optional('role', 'owner|admin|developer|viewer'),
        ],
        [
          oneOf(optional('permissions', '<a,b,...>'), [
            optional('grant', '<a,...>'),
            optional('revoke', '<a,...>'),
          ]),
        ],
        [optional('status', 'active|suspended')],
      ],
    ],
  },
  {
    name: 'member remove',
    run: memberRemove,
    synopses: [[[required('workspace', '<slug>'), required('email', '<email>')]]],
  },
];

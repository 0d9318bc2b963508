/** herald user create|list: options in, use-case, output. */
import { listWorkspaceMembers } from '../../commands/team/members.js';
import { addUser } from '../../commands/team/users.js';
import { type AdminContext, operatorActor } from '../context.js';
import { listing } from '../output.js';
import { type CommandResult, type Options, run, text } from './options.js';
import { type AdminCommand, optional, required } from './table.js';

export async function userCreate(context: AdminContext, options: Options): Promise<CommandResult> {
  const { userId, email, role, workspace } = await run(
    addUser(
      context,
      {
        workspace: text(options, 'workspace'),
        email: text(options, 'email'),
        password: text(options, 'password'),
        role: text(options, 'role'),
      },
      operatorActor(),
    ),
  );
  return {
    json: { id: userId },
    human: `Added ${email} to ${workspace.slug} as ${role} (user id ${userId})`,
  };
}

/** herald user list --workspace <slug> → {"users": [...]}: the workspace's users, by email */
export async function userList(context: AdminContext, options: Options): Promise<CommandResult> {
  const { members, workspace } = await run(
    listWorkspaceMembers(context, { workspace: text(options, 'workspace') }),
  );
  return {
    json: {
      users: members.map((member) => ({
        id: member.userId,
        email: member.email,
        role: member.role,
        status: member.status,
      })),
    },
    human: listing(
      members,
      ['ID', 'EMAIL', 'ROLE', 'STATUS'],
      (member) => [member.userId, member.email, member.role, member.status],
      `${workspace.slug} has no users`,
    ),
  };
}

export const USER_COMMANDS: AdminCommand[] = [
  {
    name: 'user create',
    run: userCreate,
    synopses: [
      [
        [
          required('workspace', '<slug>'),
          required('email', '<email>'),
          required('password', '<pw>'),
          optional('role', 'owner|admin|developer|viewer'),
        ],
      ],
    ],
  },
  { name: 'user list', run: userList, synopses: [[[required('workspace', '<slug>')]]] },
];

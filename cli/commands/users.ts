/** herald user create: options in, use-case, output. */
import { addUser } from '../../commands/users.js';
import type { AdminContext } from '../context.js';
import { type CommandResult, type Options, run, text } from './options.js';
import { type AdminCommand, optional, required } from './table.js';

export async function userCreate(context: AdminContext, options: Options): Promise<CommandResult> {
  const { userId, email, role, workspace } = await run(
    addUser(context, {
      workspace: text(options, 'workspace'),
      email: text(options, 'email'),
      password: text(options, 'password'),
      role: text(options, 'role'),
    }),
  );
  return {
    json: { id: userId },
    human: `Added ${email} to ${workspace.slug} as ${role} (user id ${userId})`,
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
];

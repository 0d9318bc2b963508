/** herald user set-password: the password from standard input, the use-case, output. */
import { setUserPassword } from '../../commands/team/passwords.js';
import { type AdminContext, operatorActor } from '../context.js';
import { type CommandResult, type Options, run, text } from './options.js';
import { readNewPassword } from './password-input.js';
import { type AdminCommand, required } from './table.js';

/**
 * herald user set-password --email <email>: the password from standard input (never argv); the
 * user's console sessions end, and each of their workspaces' audit logs records it.
 */
export async function userSetPassword(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const email = text(options, 'email');
  const passwords = await readNewPassword();
  const { email: user, sessionsEnded } = await run(
    setUserPassword(context, operatorActor(), { email, ...passwords }),
  );
  return {
    json: { email: user, sessions_ended: sessionsEnded },
    human: `Set the password of ${user}; ${sessionsEnded} console session${sessionsEnded === 1 ? '' : 's'} signed out`,
  };
}

export const PASSWORD_COMMANDS: AdminCommand[] = [
  {
    name: 'user set-password',
    run: userSetPassword,
    synopses: [[[required('email', '<email>')]]],
    summary: 'the password from standard input',
  },
];

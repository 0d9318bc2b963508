/** herald invite create|list|revoke: options in, use-case, output. */
import {
  createInvitation,
  listWorkspaceInvitations,
  revokeInvitation,
} from '../../commands/team/invitations.js';
import { type AdminContext, operatorActor } from '../context.js';
import { type CommandResult, idOption, type Options, run, text, wholeNumber } from './options.js';
import { type AdminCommand, optional, required } from './table.js';

/**
 * herald invite create --workspace <slug> --email <email> [--role r] [--expires-in-days n]
 *   → {"id", "expires_at", "token"}
 */
export async function inviteCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const invitation = await run(
    createInvitation(
      context,
      {
        workspace: text(options, 'workspace'),
        email: text(options, 'email'),
        role: text(options, 'role'),
        expiresInDays: wholeNumber(options, 'expires-in-days'),
      },
      operatorActor(),
    ),
  );
  const { id, email, role, token, workspace } = invitation;
  const expiresAt = invitation.expiresAt.toISOString();
  return {
    json: { id, expires_at: expiresAt, token },
    human:
      `Invited ${email} to ${workspace.slug} as ${role} (invitation ${id}, expires ${expiresAt}).\n` +
      `Token (shown once): ${token}`,
  };
}

/** herald invite list --workspace <slug> → {"invites": [...]}, every status, oldest first */
export async function inviteList(context: AdminContext, options: Options): Promise<CommandResult> {
  const { invitations, workspace } = await run(
    listWorkspaceInvitations(context, { workspace: text(options, 'workspace') }),
  );
  const invites = invitations.map((invite) => ({
    id: invite.id,
    email: invite.email,
    role: invite.role,
    status: invite.status,
    expires_at: invite.expiresAt.toISOString(),
  }));
  return {
    json: { invites },
    human: invites.length
      ? invites
          .map(
            (invite) =>
              `${invite.id}  ${invite.email}  ${invite.role}  ${invite.status}  expires ${invite.expires_at}`,
          )
          .join('\n')
      : `${workspace.slug} has no invitations`,
  };
}

/** herald invite revoke --id <id> → {"revoked": true} */
export async function inviteRevoke(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const id = idOption(options, 'invitation');
  await run(revokeInvitation(context, { id }, operatorActor()));
  return { json: { revoked: true }, human: `Revoked invitation ${id}` };
}

export const INVITE_COMMANDS: AdminCommand[] = [
  {
    name: 'invite create',
    run: inviteCreate,
    synopses: [
      [
        [
          required('workspace', '<slug>'),
          required('email', '<email>'),
          optional('role', '<role>'),
          optional('expires-in-days', '1-30'),
        ],
      ],
    ],
  },
  { name: 'invite list', run: inviteList, synopses: [[[required('workspace', '<slug>')]]] },
  { name: 'invite revoke', run: inviteRevoke, synopses: [[[required('id', '<id>')]]] },
];

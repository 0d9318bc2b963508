/** People: a user added to a workspace as a member (created on first use, reused after). */
import { upsertMember } from '../../db/users.js';
import type { Workspace } from '../../db/workspaces.js';
import { isRole, ROLE_PERMISSIONS, ROLES, type Role } from '../../domain/access.js';
import { hashPassword } from '../../security/password.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import { conflict, fieldsOf, invalid, isEmail, optionalText, requiredText } from '../input.js';
import { findWorkspace } from './workspaces.js';

const MIN_PASSWORD_LENGTH = 8;

export interface AddUserInput {
  workspace?: string;
  email?: string;
  /** Used only when the email is new to Herald; an existing user keeps theirs. */
  password?: string;
  /** `developer` when not given. */
  role?: string;
}

export interface AddedUser {
  userId: number;
  email: string;
  role: Role;
  workspace: Workspace;
}

/** Makes the user a member of the workspace with the role's permissions. */
export async function addUser(
  deps: Pick<CommandDeps, 'sql'>,
  input: AddUserInput,
  actor: Actor,
): Promise<AddedUser> {
  const field = fieldsOf<AddUserInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const email = requiredText(input.email, field('email'));
  if (!isEmail(email)) throw invalid`${field('email')} "${email}" is not an email address`;
  const password = requiredText(input.password, field('password'));
  if (password.length < MIN_PASSWORD_LENGTH)
    throw invalid`${field('password')} must be at least ${MIN_PASSWORD_LENGTH} characters`;
  const roleGiven = optionalText(input.role);
  const role = roleGiven ?? 'developer';
  if (!isRole(role)) throw invalid`${field('role')} must be one of ${ROLES.join(', ')}`;
  const { userId, created } = await upsertMember(
    deps.sql,
    {
      workspaceId: workspace.id,
      email,
      passwordHash: await hashPassword(password),
      role,
      permissions: ROLE_PERMISSIONS[role],
    },
    (tx) =>
      writeAudit(tx, actor, workspace.id, {
        action: 'member.added',
        target: `member ${email.toLowerCase()}`,
        details: roleGiven === undefined ? {} : { role },
      }),
  );
  if (!created) throw conflict`${email} is already a member of ${workspace.slug}`;
  return { userId, email, role, workspace };
}

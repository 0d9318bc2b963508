/** Invitations to a workspace: the token is given once and stored only as a keyed hash. */
import {
  type InvitationListing,
  insertInvitation,
  listInvitations,
  revokeInvitation as revokeInvitationRow,
} from '../db/invitations.js';
import type { Workspace } from '../db/workspaces.js';
import { isRole, ROLES, type Role } from '../domain/access.js';
import { issueInvitationToken, keyedHash } from '../security/tokens.js';
import type { CommandDeps } from './deps.js';
import {
  conflict,
  fieldsOf,
  invalid,
  isEmail,
  notFound,
  optionalText,
  requiredText,
} from './input.js';
import { findWorkspace } from './workspaces.js';

const EXPIRES_IN_DAYS = { min: 1, max: 30, default: 7 };

export interface CreateInvitationInput {
  workspace?: string;
  email?: string;
  /** `developer` when not given. */
  role?: string;
  /** 1 to 30; 7 when not given. */
  expiresInDays?: number;
}

export interface CreatedInvitation {
  id: number;
  email: string;
  role: Role;
  expiresAt: Date;
  /** The secret the invitee accepts with: shown once. */
  token: string;
  workspace: Workspace;
}

export async function createInvitation(
  deps: Pick<CommandDeps, 'sql' | 'secret'>,
  input: CreateInvitationInput,
): Promise<CreatedInvitation> {
  const field = fieldsOf<CreateInvitationInput>();
  const workspace = await findWorkspace(deps, input.workspace);
  const email = requiredText(input.email, field('email'));
  if (!isEmail(email)) throw invalid`${field('email')} "${email}" is not an email address`;
  const role = optionalText(input.role) ?? 'developer';
  if (!isRole(role)) throw invalid`${field('role')} must be one of ${ROLES.join(', ')}`;
  const days = input.expiresInDays ?? EXPIRES_IN_DAYS.default;
  if (!Number.isInteger(days) || days < EXPIRES_IN_DAYS.min || days > EXPIRES_IN_DAYS.max)
    throw invalid`${field('expiresInDays')} must be an integer from ${EXPIRES_IN_DAYS.min} to ${EXPIRES_IN_DAYS.max}`;
  const token = issueInvitationToken();
  const result = await insertInvitation(deps.sql, {
    workspaceId: workspace.id,
    email,
    role,
    tokenHash: keyedHash(deps.secret, 'invitation-hash', token),
    expiresInDays: days,
  });
  if (result.outcome === 'already_member')
    throw conflict`${email} is already a member of ${workspace.slug}`;
  if (result.outcome === 'already_invited')
    throw conflict`${email} already has a pending invitation to ${workspace.slug} (id ${result.id}); revoke it to invite again`;
  return { id: result.id, email, role, expiresAt: result.expiresAt, token, workspace };
}

/** Every invitation of the workspace, whatever its status, oldest first. */
export async function listWorkspaceInvitations(
  deps: Pick<CommandDeps, 'sql'>,
  input: { workspace?: string },
): Promise<{ invitations: InvitationListing[]; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  return { invitations: await listInvitations(deps.sql, workspace.id), workspace };
}

/** A pending (or expired) invitation stops being acceptable. */
export async function revokeInvitation(
  deps: Pick<CommandDeps, 'sql'>,
  input: { id: number },
): Promise<void> {
  const { id } = input;
  const outcome = await revokeInvitationRow(deps.sql, id);
  if (outcome === 'not_found') throw notFound`No invitation has the id ${id}`;
  if (outcome === 'accepted') throw conflict`Invitation ${id} was already accepted`;
  if (outcome === 'already_revoked') throw conflict`Invitation ${id} is already revoked`;
}

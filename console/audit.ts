import type { FastifyRequest } from 'fastify';
import { recordAudit } from '../commands/audit.js';
import type { InvitationRevokedWithInviter } from '../commands/team/members.js';
import type { ConsoleDeps } from './deps.js';
import { clientAddress, userAgent } from './http.js';

/** Records a console action: who (the signed-in user), what, and from where. */
export async function audit(
  deps: ConsoleDeps,
  request: FastifyRequest,
  who: { userId: number; email: string; workspaceId: number },
  action: string,
  target: string | null = null,
  details: Record<string, string | number | boolean | null> = {},
): Promise<void> {
  await recordAudit(deps, {
    workspaceId: who.workspaceId,
    userId: who.userId,
    actor: who.email,
    source: 'console',
    action,
    target,
    details,
    address: clientAddress(request),
    userAgent: userAgent(request),
  });
}

/** The pending invitations a member's change revoked with it (commands/team/members.ts), one entry each. */
export async function auditInvitationsRevoked(
  deps: ConsoleDeps,
  request: FastifyRequest,
  who: { userId: number; email: string; workspaceId: number },
  revoked: readonly InvitationRevokedWithInviter[],
): Promise<void> {
  for (const invitation of revoked)
    await audit(deps, request, who, 'invitation.revoked', `invitation ${invitation.email}`, {
      invitation_id: invitation.id,
      reason: invitation.reason,
    });
}

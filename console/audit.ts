import type { FastifyRequest } from 'fastify';
import { recordAudit } from '../commands/audit.js';
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

import type { Sql } from './client.js';

/** Who and what a consent page names: the client as it registered, the user, the workspace. */
export interface ConsentParties {
  clientName: string;
  /** The registration's other members as the client sent them (client_uri among them). */
  clientMetadata: Record<string, unknown>;
  clientRegisteredAt: Date;
  userEmail: string;
  workspaceName: string;
  workspaceSlug: string;
}

/**
 * The parties of a pending authorization, or undefined when the client is gone or the user is no
 * longer an active member of the workspace (the page then says the request expired).
 */
export async function findConsentParties(
  sql: Sql,
  ids: { clientId: string; userId: number; workspaceId: number },
): Promise<ConsentParties | undefined> {
  const [row] = await sql<ConsentParties[]>`
    select c.name as client_name, c.metadata as client_metadata,
           c.created_at as client_registered_at, u.email as user_email,
           w.name as workspace_name, w.slug as workspace_slug
    from oauth_clients c
    cross join users u
    join workspace_members m on m.user_id = u.id and m.status = 'active'
    join workspaces w on w.id = m.workspace_id
    where c.id = ${ids.clientId} and u.id = ${ids.userId} and w.id = ${ids.workspaceId}`;
  return row;
}

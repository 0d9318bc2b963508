import type { Sql } from './client.js';
import type { DependentOtpService } from './message-templates.js';

/** A workspace's registered sender ids as the console lists, adds and deletes them. */

export interface SenderListing {
  id: number;
  providerSlug: string;
  sender: string;
  approved: boolean;
  createdAt: Date;
}

export async function listSenderIds(sql: Sql, workspaceId: number): Promise<SenderListing[]> {
  return sql<SenderListing[]>`
    select id, provider_slug, sender, approved, created_at from sender_ids
    where workspace_id = ${workspaceId} order by provider_slug, sender`;
}

export async function findSenderListing(
  sql: Sql,
  workspaceId: number,
  id: number,
): Promise<SenderListing | undefined> {
  const [sender] = await sql<SenderListing[]>`
    select id, provider_slug, sender, approved, created_at from sender_ids
    where workspace_id = ${workspaceId} and id = ${id}`;
  return sender;
}

/** Undefined when the provider already has this sender in the workspace (its approval kept). */
export async function insertNewSenderId(
  sql: Sql,
  input: { workspaceId: number; providerSlug: string; sender: string; approved: boolean },
): Promise<{ id: number } | undefined> {
  const [row] = await sql<{ id: number }[]>`
    insert into sender_ids (workspace_id, provider_slug, sender, approved)
    values (${input.workspaceId}, ${input.providerSlug}, ${input.sender}, ${input.approved})
    on conflict (workspace_id, provider_slug, sender) do nothing
    returning id`;
  return row;
}

/** The services that send from `sender` through `providerSlug` (no provider: `ownSlug`). */
export async function otpServicesUsingSender(
  sql: Sql,
  workspaceId: number,
  sender: Pick<SenderListing, 'providerSlug' | 'sender'>,
  ownSlug: string,
): Promise<DependentOtpService[]> {
  return sql<DependentOtpService[]>`
    select slug::text, name, code_length from otp_services
    where workspace_id = ${workspaceId} and sender_id = ${sender.sender}
      and coalesce(provider_slug, ${ownSlug}) = ${sender.providerSlug}
    order by id`;
}

/** Deletes the sender unless an OTP service sends from it (checked in the same statement). */
export async function deleteUnusedSenderId(
  sql: Sql,
  workspaceId: number,
  id: number,
  ownSlug: string,
): Promise<boolean> {
  const result = await sql`
    delete from sender_ids d
    where d.workspace_id = ${workspaceId} and d.id = ${id}
      and not exists (
        select 1 from otp_services s
        where s.workspace_id = d.workspace_id and s.sender_id = d.sender
          and coalesce(s.provider_slug, ${ownSlug}) = d.provider_slug)`;
  return result.count > 0;
}

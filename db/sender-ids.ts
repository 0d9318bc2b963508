import type { Sql, TransactionSql } from './client.js';
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

/**
 * The sender, locked until the transaction ends: an OTP service being saved with it (which reads
 * it `for share`) commits first, or waits and then sees this transaction's change.
 */
export async function lockSenderListing(
  tx: TransactionSql,
  workspaceId: number,
  id: number,
): Promise<SenderListing | undefined> {
  const [sender] = await tx<SenderListing[]>`
    select id, provider_slug, sender, approved, created_at from sender_ids
    where workspace_id = ${workspaceId} and id = ${id}
    for update`;
  return sender;
}

/** Undefined when the provider already has this sender in the workspace (its approval kept). */
export async function insertNewSenderId(
  sql: Sql | TransactionSql,
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
  sql: Sql | TransactionSql,
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

/**
 * Deletes the sender. The caller holds its lock (lockSenderListing) and has found no OTP service
 * sending from it: no foreign key guards otp_services.sender_id.
 */
export async function deleteSenderId(
  tx: TransactionSql,
  workspaceId: number,
  id: number,
): Promise<boolean> {
  const result =
    await tx`delete from sender_ids where workspace_id = ${workspaceId} and id = ${id}`;
  return result.count > 0;
}

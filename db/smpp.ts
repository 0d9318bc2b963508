import { type RecordedReceipt, recordDelivery } from './campaign-messages.js';
import type { Sql } from './client.js';
import { recordOtpDelivery } from './otp-requests.js';
import type { ProviderRecord } from './providers.js';

/** Every active SMPP provider of every workspace: a worker keeps a bind up for each. */
export async function findActiveSmppProviders(sql: Sql): Promise<ProviderRecord[]> {
  return sql<ProviderRecord[]>`
    select id, workspace_id, slug, name, type, active, requires_sender_id, messages_per_second,
      settings, credentials
    from providers where type = 'smpp' and active
    order by id`;
}

/** Maps the ids of a long message's later parts to the message's own (its first part's) id. */
export async function recordMessageParts(
  sql: Sql,
  input: { workspaceId: number; providerSlug: string; partIds: string[] },
): Promise<void> {
  const [messageId, ...later] = input.partIds;
  if (!messageId || later.length === 0) return;
  await sql`
    insert into smpp_message_parts (workspace_id, provider_slug, part_message_id, message_id)
    select ${input.workspaceId}, ${input.providerSlug}, part, ${messageId}
    from unnest(${later}::text[]) as part
    on conflict (workspace_id, provider_slug, part_message_id)
      do update set message_id = excluded.message_id, created_at = now()`;
}

export interface SmppReceipt {
  workspaceId: number;
  providerSlug: string;
  /** The id the receipt names: the message's, or one of its later parts'. */
  providerMessageId: string;
  status: 'delivered' | 'undelivered' | 'unknown';
  errorCode: string | null;
  at: Date;
}

/**
 * Records a receipt that came over a bind: on the workspace's latest campaign message or OTP
 * request with that provider id (recordDelivery / recordOtpDelivery: the latest `at` wins), or,
 * when none is settled with it yet, kept until it is (db/smpp-pending-receipts.ts).
 */
export async function recordSmppReceipt(
  sql: Sql,
  receipt: SmppReceipt,
): Promise<{ target: 'campaign' | 'otp' | 'pending'; recorded?: RecordedReceipt }> {
  const { workspaceId, providerSlug } = receipt;
  return sql.begin(async (tx) => {
    const key = `${workspaceId}/${providerSlug}/${receipt.providerMessageId}`;
    await tx`select pg_advisory_xact_lock(hashtextextended(${key}::text, 0))`;
    const [part] = await tx<{ messageId: string }[]>`
      select message_id from smpp_message_parts
      where workspace_id = ${workspaceId} and provider_slug = ${providerSlug}
        and part_message_id = ${receipt.providerMessageId}`;
    const messageId = part?.messageId ?? receipt.providerMessageId;
    const delivery = {
      provider: providerSlug,
      providerMessageId: messageId,
      status: receipt.status,
      errorCode: receipt.errorCode,
      at: receipt.at,
    };
    const [message] = await tx<{ campaignId: number; seq: number }[]>`
      select m.campaign_id, m.seq from campaign_messages m join campaigns c on c.id = m.campaign_id
      where m.provider_slug = ${providerSlug} and m.provider_message_id = ${messageId}
        and c.workspace_id = ${workspaceId}
      order by m.submitted_at desc nulls last
      limit 1`;
    if (message) {
      return {
        target: 'campaign',
        recorded: await recordDelivery(tx, { ...message, ...delivery }),
      };
    }
    const [request] = await tx<{ id: string }[]>`
      select id from otp_requests
      where workspace_id = ${workspaceId} and provider_slug = ${providerSlug}
        and provider_message_id = ${messageId}
      order by created_at desc
      limit 1`;
    if (request) {
      const recorded = await recordOtpDelivery(tx, { requestId: request.id, ...delivery });
      return { target: 'otp', recorded };
    }
    await tx`
      insert into smpp_pending_receipts as p (workspace_id, provider_slug, provider_message_id,
        status, error_code, at)
      values (${workspaceId}, ${providerSlug}, ${receipt.providerMessageId}, ${receipt.status},
        ${receipt.errorCode}, ${receipt.at})
      on conflict (workspace_id, provider_slug, provider_message_id) do update set
        status = excluded.status, error_code = excluded.error_code, at = excluded.at,
        received_at = now()
      where p.at <= excluded.at`;
    return { target: 'pending' };
  });
}

/**
 * Forgets receipts no message claimed within `pendingDays` (their submission's outcome was
 * unknown, or another system shares the SMSC account) and part maps older than `partDays`.
 */
export async function deleteStaleSmppRecords(
  sql: Sql,
  options: { pendingDays: number; partDays: number },
): Promise<void> {
  await sql`
    delete from smpp_pending_receipts
    where received_at < now() - make_interval(days => ${options.pendingDays})`;
  await sql`
    delete from smpp_message_parts
    where created_at < now() - make_interval(days => ${options.partDays})`;
}

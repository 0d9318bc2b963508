import type { Sql, TransactionSql } from './client.js';

export interface Reconciled {
  campaignMessages: number;
  otpRequests: number;
  campaigns: number;
}

/**
 * After a restore from a backup (docs/operations.md "Backups and restore"). Every campaign message and OTP
 * request the restored database holds as not yet submitted may have gone out after the backup
 * was taken, and nothing in the database can tell: each is marked as attempted now, on the
 * provider its first submission would use, so a worker looks it up at that provider by its
 * reference before submitting anything (activities/campaign.ts, activities/otp.ts). What the
 * provider has is settled as sent; only what it never got is submitted. A provider that cannot
 * look messages up (Twilio, SMPP) never gets them again: they fail as an unknown outcome.
 *
 * Every unfinished campaign is paused, for the workers' sweeper to dispatch again under its saved
 * workflow id: one whose run Temporal has is left to it, one that Temporal's (older) backup lacks
 * is started (commands/messaging/dispatch-paused.ts).
 */
export async function reconcileRestoredDatabase(
  sql: Sql,
  /** Runs in the same transaction, given what was reconciled (its audit line). */
  alongside?: (tx: TransactionSql, done: Reconciled) => Promise<void>,
): Promise<Reconciled> {
  return sql.begin(async (tx) => {
    const messages = await tx`
      update campaign_messages m
      set attempt_provider = case c.routing_type
            when 'failover' then r.provider_slugs[1]
            else coalesce(c.provider_slug, 'own') end,
          attempt_started_at = now()
      from campaigns c
      left join failover_routes r
        on r.workspace_id = c.workspace_id and r.slug = c.failover_route_slug
      where m.campaign_id = c.id and m.status = 'queued' and m.attempt_provider is null
        and (c.routing_type <> 'failover' or r.slug is not null)
        -- An opted-out recipient's unmarked message is failed by the worker, never looked up.
        and not (c.purpose = 'marketing' and exists (
          select 1 from opt_outs o where o.workspace_id = c.workspace_id and o.recipient = m.recipient))`;
    const otps = await tx`
      update otp_requests set attempt_started_at = now()
      where status = 'pending' and attempt_started_at is null`;
    const campaigns = await tx`
      update campaigns set status = 'paused'
      where status in ('queued', 'scheduled') and workflow_id is not null`;
    const done = {
      campaignMessages: messages.count,
      otpRequests: otps.count,
      campaigns: campaigns.count,
    };
    await alongside?.(tx, done);
    return done;
  });
}

import type { Sql, TransactionSql } from './client.js';

/*
 * Orphan campaigns: what the REST send left behind before migration 0011, when it saved a campaign
 * in one transaction and tied it to its Idempotency-Key in another. An api that died in between
 * left the campaign paused with every message queued and no workflow, and the retry with the same
 * key saved a second campaign. Since 0011 the REST send and `herald campaign create` save a
 * campaign together with its workflow id (and key), so no campaign they save can match either
 * definition below.
 *
 * A campaign C is SUPERSEDED when all of these hold:
 *   1. C came from the REST API and has no workflow recorded: it was never dispatched (it is
 *      `paused`, or `completed` once maintenance closed it);
 *   2. no idempotency record names C: it was never tied to a key;
 *   3. an idempotency record of C's workspace, claimed no later than C was saved, names a later
 *      campaign of the same workspace and API key with the same body, reference, purpose, number
 *      of requested recipients and recipients in the same order: the same request's retry.
 * Nothing can dispatch C: its key resumes the other campaign, and `campaign resume` refuses it.
 *
 * A campaign is LAPSED when it is `paused`, has no workflow recorded, no idempotency record names
 * it, and its validity period has ended (24 hours after it was saved, for campaigns saved before
 * validity periods existed): any dispatch would fail every message as expired. This is also how
 * an orphan whose key record was purged (a day after its request) is found.
 *
 * The daily maintenance closes both kinds, a superseded one once it is an hour old (no request
 * lives that long, so the one that saved it cannot still be tying it to its key): each queued
 * message fails with the reason, the campaign completes. Nothing is ever sent.
 */

/** How old a superseded campaign must be before it is closed. */
const SUPERSEDED_GRACE = '1 hour';
/** The validity of a campaign saved before validity periods existed (MESSAGE_VALIDITY_HOURS). */
const LEGACY_VALIDITY = '24 hours';

const LAPSED_REASON = 'never dispatched before its validity period ended; closed unsent';
const supersededReason = (campaignId: number) =>
  `orphan: campaign ${campaignId} was saved for the same Idempotency-Key; closed unsent`;

/** Conditions 1 and 2 on the campaign `c`, but its status: never dispatched, never tied to a key. */
const undispatchedAndUnkeyed = (sql: Sql | TransactionSql) => sql`
  c.workflow_id is null
  and not exists (
    -- Only REST sends store campaign ids; OTP keys hold uuids, which no campaign id equals.
    select 1 from idempotency_keys k
    where k.workspace_id = c.workspace_id and k.resource_id = c.id::text)`;

/** Condition 3: the campaign that holds the key `c` was saved for, if any. */
const supersedingOf = (sql: Sql | TransactionSql) => sql`
  select later.id from idempotency_keys k
  join campaigns later on later.workspace_id = k.workspace_id and later.id::text = k.resource_id
  where c.source = 'api' and k.workspace_id = c.workspace_id and k.created_at <= c.created_at
    and later.id > c.id
    and later.api_key_id is not distinct from c.api_key_id
    and later.body = c.body and later.reference is not distinct from c.reference
    and later.purpose = c.purpose and later.requested_recipients = c.requested_recipients
    and array(select recipient from campaign_messages where campaign_id = later.id order by seq)
      = array(select recipient from campaign_messages where campaign_id = c.id order by seq)
  order by later.id
  limit 1`;

/**
 * The campaign that superseded this one under its Idempotency-Key, if it is superseded (or was,
 * before maintenance closed it: a closed orphan is the only completed campaign without a workflow).
 */
export async function findSupersedingCampaign(
  sql: Sql,
  workspaceId: number,
  campaignId: number,
): Promise<number | undefined> {
  const [row] = await sql<{ id: number }[]>`
    select superseding.id from campaigns c
    cross join lateral (${supersedingOf(sql)}) superseding
    where c.id = ${campaignId} and c.workspace_id = ${workspaceId} and ${undispatchedAndUnkeyed(sql)}`;
  return row?.id;
}

/**
 * Closes up to `limit` superseded or lapsed campaigns (see above) without sending anything;
 * returns how many it closed. Campaigns another transaction holds are left for the next run.
 */
export async function closeOrphanCampaigns(sql: Sql, limit: number): Promise<number> {
  return sql.begin(async (tx) => {
    const orphans = await tx<{ id: number; supersededBy: number | null }[]>`
      select c.id, superseding.id as superseded_by
      from campaigns c
      left join lateral (${supersedingOf(tx)}) superseding on true
      where c.status = 'paused' and ${undispatchedAndUnkeyed(tx)}
        and ((superseding.id is not null and c.created_at < now() - ${SUPERSEDED_GRACE}::interval)
          or coalesce(c.valid_until, c.created_at + ${LEGACY_VALIDITY}::interval) < now())
      order by c.id
      limit ${limit}
      for update of c skip locked`;
    if (orphans.length === 0) return 0;
    const ids = orphans.map((orphan) => orphan.id);
    const reasons = orphans.map((orphan) =>
      orphan.supersededBy === null ? LAPSED_REASON : supersededReason(orphan.supersededBy),
    );
    // Messages first, so the campaign.completed event counts them failed.
    await tx`
      update campaign_messages m set status = 'failed', error = r.reason
      from unnest(${ids}::bigint[], ${reasons}::text[]) as r(campaign_id, reason)
      where m.campaign_id = r.campaign_id and m.status = 'queued'`;
    await tx`
      update campaigns set status = 'completed', completed_at = now()
      where id = any(${ids}::bigint[])`;
    return orphans.length;
  });
}

/**
 * Retention (RETENTION_DAYS, docs/operations.md "Retention and erasure"): personal data older than the window
 * goes, every counter stays. A completed campaign loses its body and its messages' recipients are
 * masked (herald_masked_number, 0029), their personalised texts emptied as the body is (0035); an OTP request loses its text and its recipient likewise;
 * failed verifications are deleted; dispatched webhook events keep only the masked recipient; a
 * recipient's reply (inbound_messages, 0036) keeps only its masked sender and loses its text.
 * Report tables and triggers read neither bodies nor recipients, so no figure moves. Each function
 * does one bounded batch and returns how many rows it took (a full batch: call again).
 */
import type { Sql } from './client.js';

/** Up to `batchSize` campaigns (each with up to 1,000 messages), oldest first. */
export async function dropCampaignPersonalData(
  sql: Sql,
  days: number,
  batchSize: number,
): Promise<number> {
  const [row] = await sql<{ campaigns: number }[]>`
    with due as (
      select id from campaigns
      where personal_data_dropped_at is null and status in ('completed', 'canceled')
        and created_at < now() - make_interval(days => ${days})
      order by created_at
      limit ${batchSize}
      for update skip locked
    ),
    messages as (
      update campaign_messages m
      set recipient = herald_masked_number(m.recipient),
          error = herald_scrub_number(m.error, m.recipient),
          body = case when m.body is null then null else '' end
      from due
      where m.campaign_id = due.id and m.recipient like '+%'
    ),
    exclusions as (
      update campaign_exclusions e set recipient = herald_masked_number(e.recipient)
      from due
      where e.campaign_id = due.id and e.recipient like '+%'
    ),
    dropped as (
      update campaigns c set body = '', personal_data_dropped_at = now()
      from due where c.id = due.id
      returning 1
    )
    select count(*)::int as campaigns from dropped`;
  return row?.campaigns ?? 0;
}

/** Up to `batchSize` OTP requests, oldest first: long expired by then (codes live minutes). */
export async function dropOtpPersonalData(
  sql: Sql,
  days: number,
  batchSize: number,
): Promise<number> {
  const result = await sql`
    with due as (
      select id from otp_requests
      where personal_data_dropped_at is null
        and created_at < now() - make_interval(days => ${days})
      order by created_at
      limit ${batchSize}
      for update skip locked
    )
    update otp_requests r
    set recipient = herald_masked_number(r.recipient), body_template = '',
        error = herald_scrub_number(r.error, r.recipient), personal_data_dropped_at = now()
    from due where r.id = due.id`;
  return result.count;
}

/** Up to `batchSize` replies, oldest first: the sender masked, the text emptied, the counts kept. */
export async function dropInboundPersonalData(
  sql: Sql,
  days: number,
  batchSize: number,
): Promise<number> {
  const result = await sql`
    with due as (
      select id from inbound_messages
      where personal_data_dropped_at is null
        and received_at < now() - make_interval(days => ${days})
      order by received_at
      limit ${batchSize}
      for update skip locked
    )
    update inbound_messages i
    set from_number = herald_masked_number(i.from_number), text = '',
        personal_data_dropped_at = now()
    from due where i.id = due.id`;
  return result.count;
}

/** Failed verifications count for 15 minutes; those older than the window go. */
export async function deleteOldVerificationFailures(
  sql: Sql,
  days: number,
  batchSize: number,
): Promise<number> {
  const result = await sql`
    delete from otp_verification_failures where id in (
      select id from otp_verification_failures
      where failed_at < now() - make_interval(days => ${days})
      limit ${batchSize})`;
  return result.count;
}

/**
 * Dispatched webhook events are deleted 30 days after dispatch (db/webhooks.ts); with a shorter
 * window, those older than it keep only the masked recipient (a `message.received`: the masked
 * sender, and no text).
 */
export async function maskOldWebhookEventRecipients(
  sql: Sql,
  days: number,
  batchSize: number,
): Promise<number> {
  const result = await sql`
    update webhook_events e
    set data = case when e.type = 'message.received'
      then herald_scrub_number(e.data::text, e.data->>'from')::jsonb || '{"text": ""}'
      else herald_scrub_number(e.data::text, e.data->>'recipient')::jsonb end
    where e.id in (
      select id from webhook_events
      where dispatched_at < now() - make_interval(days => ${days})
        and (data->>'recipient' like '+%'
          or (type = 'message.received' and data->>'from' like '+%'))
      limit ${batchSize})`;
  return result.count;
}

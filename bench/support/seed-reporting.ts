import type { Sql } from '../../db/client.js';

const BATCHES = 1_000;
const PER_BATCH = 1_000;
/** Batches settled per statement: the reporting triggers see one statement's rows at once. */
const SETTLE_STEP = 50;

/**
 * One million messages in 1,000 batches spread over 30 days (every fifth a named campaign, the
 * rest API Quick Sends), written as the service writes them: inserted queued, then settled and
 * receipted by UPDATEs, so the reporting triggers build the tables the MCP tools read.
 * Outcomes: 2 % fail to send; of the sent, 10 % undelivered, about 13 % still awaiting a receipt.
 */
export async function seedMillionMessages(sql: Sql, workspaceSlug: string) {
  const started = performance.now();
  const [workspace] = await sql<{ id: number }[]>`
    select id from workspaces where slug = ${workspaceSlug}`;
  const workspaceId = (workspace as { id: number }).id;
  const ids = await sql<{ id: number }[]>`
    insert into campaigns (workspace_id, source, name, purpose, body, routing_type, provider_slug,
                           status, requested_recipients, created_at)
    select ${workspaceId}, case when g % 5 = 0 then 'campaign' else 'api' end,
      case when g % 5 = 0 then 'Campaign ' || g end, 'marketing', 'Bench message', 'direct', 'own',
      'queued', ${PER_BATCH}, now() - g * interval '43 minutes'
    from generate_series(1, ${BATCHES}) g
    returning id`;
  const first = Math.min(...ids.map((row) => row.id));
  const last = Math.max(...ids.map((row) => row.id));
  for (let from = first; from <= last; from += SETTLE_STEP) {
    const to = Math.min(last, from + SETTLE_STEP - 1);
    await sql`
      insert into campaign_messages (campaign_id, seq, recipient)
      select c, s, '+614' || lpad(((c % 100000) * ${PER_BATCH} + s)::text, 8, '0')
      from generate_series(${from}::bigint, ${to}::bigint) c, generate_series(1, ${PER_BATCH}) s`;
    await sql`
      update campaign_messages m set
        status = case when m.seq % 50 = 0 then 'failed' else 'sent' end,
        submitted_at = case when m.seq % 50 <> 0 then c.created_at + m.seq * interval '50 ms' end,
        provider_slug = 'own'
      from campaigns c
      where c.id = m.campaign_id and m.campaign_id between ${from} and ${to}`;
    await sql`
      update campaign_messages m set
        delivery_status = case when m.seq % 10 = 0 then 'undelivered' else 'delivered' end,
        delivery_error_code = case when m.seq % 10 = 0 then '30003' end,
        delivered_at = m.submitted_at + interval '4 seconds'
      where m.campaign_id between ${from} and ${to} and m.status = 'sent' and m.seq % 8 <> 0`;
    await sql`
      update campaigns set status = 'completed', completed_at = created_at + interval '2 minutes'
      where id between ${from} and ${to}`;
  }
  await sql`analyze`;
  const [campaign] = await sql<{ id: number }[]>`
    select campaign_id as id from report_batches
    where workspace_id = ${workspaceId} and kind = 'campaign' order by campaign_id limit 1`;
  const [quickSend] = await sql<{ id: number }[]>`
    select campaign_id as id from report_batches
    where workspace_id = ${workspaceId} and kind = 'quick_send' order by campaign_id limit 1`;
  return {
    batches: BATCHES,
    messages: BATCHES * PER_BATCH,
    seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
    campaignId: (campaign as { id: number }).id,
    quickSendId: (quickSend as { id: number }).id,
  };
}

-- Canceled messages counted in report_batches (issue 27), as sent and failed ones are: what the MCP
-- batch reports and the console read for a canceled batch.

alter table report_batches add column canceled integer not null default 0;

update report_batches r set canceled = c.count
from (
  select campaign_id, count(*)::int as count from campaign_messages
  where status = 'canceled' group by campaign_id
) c
where r.campaign_id = c.campaign_id;

-- 0025's function, with canceled messages counted in report_batches.canceled.
create or replace function report_message_changes() returns trigger language plpgsql as $$
begin
  with changes as (
    select n.campaign_id, c.workspace_id, o.status as old_status, n.status as new_status,
      case when o.status = 'sent' then o.delivery_status end as old_receipt,
      case when n.status = 'sent' then n.delivery_status end as new_receipt,
      o.submitted_at as old_submitted_at, n.submitted_at as new_submitted_at,
      o.delivered_at as old_delivered_at, n.delivered_at as new_delivered_at
    from new_rows n
    join old_rows o using (campaign_id, seq)
    join campaigns c on c.id = n.campaign_id
    where o.status is distinct from n.status
       or o.delivery_status is distinct from n.delivery_status
       or o.delivered_at is distinct from n.delivered_at
  ),
  batch_counts as (
    update report_batches r set
      sent = r.sent + d.sent, failed_to_send = r.failed_to_send + d.failed_to_send,
      delivered = r.delivered + d.delivered, delivery_failed = r.delivery_failed + d.delivery_failed,
      delivery_unknown = r.delivery_unknown + d.delivery_unknown,
      canceled = r.canceled + d.canceled
    from (
      select campaign_id,
        sum((new_status = 'sent')::int - (old_status = 'sent')::int) as sent,
        sum((new_status = 'failed')::int - (old_status = 'failed')::int) as failed_to_send,
        sum((new_receipt is not distinct from 'delivered')::int
          - (old_receipt is not distinct from 'delivered')::int) as delivered,
        sum((new_receipt is not distinct from 'undelivered')::int
          - (old_receipt is not distinct from 'undelivered')::int) as delivery_failed,
        sum((new_receipt is not distinct from 'unknown')::int
          - (old_receipt is not distinct from 'unknown')::int) as delivery_unknown,
        sum((new_status = 'canceled')::int - (old_status = 'canceled')::int) as canceled
      from changes group by campaign_id
    ) d
    where r.campaign_id = d.campaign_id
  )
  insert into report_delivery_minutes as m (workspace_id, minute, sent, delivered, failed, awaiting,
    unknown)
  select workspace_id, minute, sum(sent), sum(delivered), sum(failed), sum(awaiting), sum(unknown)
  from (
    select workspace_id, date_trunc('minute', coalesce(new_submitted_at, now())) as minute,
      1 as sent, 0 as delivered, 0 as failed, 0 as awaiting, 0 as unknown
    from changes where new_status = 'sent' and old_status is distinct from 'sent'
    union all
    select workspace_id, date_trunc('minute', now()), 0, 0, 1, 0, 0
    from changes where new_status = 'failed' and old_status is distinct from 'failed'
    union all
    select workspace_id, date_trunc('minute', old_delivered_at),
      0, -(old_receipt = 'delivered')::int, -(old_receipt = 'undelivered')::int, 0,
      -(old_receipt = 'unknown')::int
    from changes where old_receipt is not null
    union all
    select workspace_id, date_trunc('minute', new_delivered_at),
      0, (new_receipt = 'delivered')::int, (new_receipt = 'undelivered')::int, 0,
      (new_receipt = 'unknown')::int
    from changes where new_receipt is not null
    union all
    select workspace_id, date_trunc('minute', coalesce(old_submitted_at, now())), 0, 0, 0, -1, 0
    from changes where old_status = 'sent' and old_receipt is null
    union all
    select workspace_id, date_trunc('minute', coalesce(new_submitted_at, now())), 0, 0, 0, 1, 0
    from changes where new_status = 'sent' and new_receipt is null
  ) contributions
  group by workspace_id, minute
  having sum(sent) <> 0 or sum(delivered) <> 0 or sum(failed) <> 0 or sum(awaiting) <> 0
    or sum(unknown) <> 0
  on conflict (workspace_id, minute) do update set
    sent = m.sent + excluded.sent, delivered = m.delivered + excluded.delivered,
    failed = m.failed + excluded.failed, awaiting = m.awaiting + excluded.awaiting,
    unknown = m.unknown + excluded.unknown;
  return null;
end $$;

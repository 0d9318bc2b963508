-- Campaigns scheduled for later and campaigns canceled (issue 27).
--
-- A scheduled campaign is dispatched at once, its run waiting on a durable timer; it reads
-- `scheduled` until its time, then `queued`. A canceled campaign sends nothing more: its queued
-- messages that no submission attempt had claimed become `canceled`, and the ones claimed finish.

alter table campaigns drop constraint campaigns_status_check;
alter table campaigns add constraint campaigns_status_check
  check (status in ('paused', 'scheduled', 'queued', 'completed', 'canceled'));
alter table campaigns add column scheduled_at timestamptz;

alter table campaign_messages drop constraint campaign_messages_status_check;
alter table campaign_messages add constraint campaign_messages_status_check
  check (status in ('queued', 'sent', 'failed', 'canceled'));

-- Endpoints may subscribe to campaign.canceled.
alter table webhook_endpoints drop constraint webhook_endpoints_events_check;
alter table webhook_endpoints add constraint webhook_endpoints_events_check check (
  cardinality(events) > 0
  and events <@ array['message.sent', 'message.delivered', 'message.failed', 'campaign.completed',
    'campaign.canceled', 'otp.accepted', 'otp.verified', 'otp.expired', 'otp.range_blocked',
    'spend.cap_near']::text[]
);

-- campaign.canceled: written with the cancel, counting what it left as it stood then.
create function webhook_campaign_canceled_events() returns trigger language plpgsql as $$
declare
  subscribers bigint[] := webhook_subscribers(new.workspace_id, 'campaign.canceled');
begin
  if subscribers is null then return null; end if;
  insert into webhook_events (workspace_id, type, data, endpoint_ids)
  select new.workspace_id, 'campaign.canceled',
    jsonb_build_object(
      'campaign_id', new.id,
      'reference', new.reference,
      'name', new.name,
      'status', new.status,
      'total_recipients', count(m.seq),
      'queued_count', count(*) filter (where m.status = 'queued'),
      'sent_count', count(*) filter (where m.status = 'sent'),
      'failed_count', count(*) filter (where m.status = 'failed'),
      'canceled_count', count(*) filter (where m.status = 'canceled'),
      'created_at', webhook_iso(new.created_at),
      'scheduled_at', webhook_iso(new.scheduled_at),
      'completed_at', webhook_iso(new.completed_at)),
    subscribers
  from campaign_messages m where m.campaign_id = new.id;
  perform pg_notify('herald_webhook_events', '');
  return null;
end $$;

create trigger campaigns_canceled_webhook after update of status on campaigns
  for each row when (new.status = 'canceled' and old.status is distinct from 'canceled')
  execute function webhook_campaign_canceled_events();

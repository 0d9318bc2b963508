-- Two-way replies (issue 27 item 5, README "Replies"): what recipients send back, other than the
-- STOP/START keywords (opt_outs), kept per workspace; HELP answered with the workspace's help text.

-- The text a HELP reply is answered with; null: no automatic answer.
alter table workspaces add column help_text text
  check (help_text is null or char_length(help_text) between 1 and 1600);

create table inbound_messages (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  provider_slug text not null,
  -- The provider's id of the message (Twilio's MessageSid, the simulator's id): a second delivery
  -- of it is the same message. Null when the provider gives none (SMPP's deliver_sm).
  provider_message_id text,
  -- Personal data, like campaign recipients and bodies: masked and emptied by retention and erasure.
  from_number text not null,
  -- The sender it answers: a number or an alphanumeric sender id of the workspace's.
  to_number text not null,
  text text not null,
  received_at timestamptz not null default now(),
  -- The campaign it answers, when known (the simulator names the message; else the latest
  -- campaign of the workspace that sent to from_number through this provider).
  campaign_id bigint references campaigns on delete set null,
  personal_data_dropped_at timestamptz,
  -- HELP's automatic answer: null when none is due; pending until a submission claims it.
  reply_status text check (reply_status in ('pending', 'submitting', 'sent', 'failed')),
  reply_body text,
  -- When the run that sends it (helpReplyWorkflow) was confirmed started.
  reply_dispatched_at timestamptz,
  reply_attempt_at timestamptz,
  reply_provider_message_id text,
  reply_error text
);
create unique index inbound_messages_provider_id_key
  on inbound_messages (workspace_id, provider_slug, provider_message_id)
  where provider_message_id is not null;
create index inbound_messages_workspace_idx on inbound_messages (workspace_id, id desc);
create index inbound_messages_from_idx on inbound_messages (from_number);
create index inbound_messages_retention_idx on inbound_messages (received_at)
  where personal_data_dropped_at is null;
-- The campaign a reply answers: the latest that sent to the number.
create index campaign_messages_recipient_idx on campaign_messages (recipient, campaign_id desc);

-- Replies in the reports: per batch and per minute of the workspace's delivery history.
alter table report_batches add column replies integer not null default 0;
alter table report_delivery_minutes add column replies integer not null default 0;

create function report_inbound_message() returns trigger language plpgsql as $$
begin
  if new.campaign_id is not null then
    update report_batches set replies = replies + 1 where campaign_id = new.campaign_id;
  end if;
  insert into report_delivery_minutes as m (workspace_id, minute, replies)
  values (new.workspace_id, date_trunc('minute', new.received_at), 1)
  on conflict (workspace_id, minute) do update set replies = m.replies + 1;
  return null;
end $$;

create trigger inbound_messages_report after insert on inbound_messages
  for each row execute function report_inbound_message();

-- The `message.received` webhook event, in the outbox with the row (0007's pattern).
create function webhook_inbound_event() returns trigger language plpgsql as $$
declare
  subscribers bigint[] := webhook_subscribers(new.workspace_id, 'message.received');
begin
  if subscribers is null then return null; end if;
  insert into webhook_events (workspace_id, type, data, endpoint_ids)
  values (new.workspace_id, 'message.received',
    jsonb_build_object(
      'inbound_id', new.id,
      'from', new.from_number,
      'to', new.to_number,
      'text', new.text,
      'provider', new.provider_slug,
      'provider_message_id', new.provider_message_id,
      'campaign_id', new.campaign_id,
      'received_at', webhook_iso(new.received_at)),
    subscribers);
  perform pg_notify('herald_webhook_events', '');
  return null;
end $$;

create trigger inbound_messages_webhook after insert on inbound_messages
  for each row execute function webhook_inbound_event();

-- Endpoints may subscribe to it: added to whatever list the check holds by now.
do $$
declare
  definition text;
begin
  select pg_get_constraintdef(oid) into definition from pg_constraint
  where conname = 'webhook_endpoints_events_check' and conrelid = 'webhook_endpoints'::regclass;
  if definition is not null and position('message.received' in definition) = 0 then
    execute 'alter table webhook_endpoints drop constraint webhook_endpoints_events_check';
    execute 'alter table webhook_endpoints add constraint webhook_endpoints_events_check '
      || replace(definition, '''::text]', '''::text, ''message.received''::text]');
  end if;
end $$;

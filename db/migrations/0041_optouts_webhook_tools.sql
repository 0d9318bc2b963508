-- The console's Opt-outs page and webhook tools (test event, secret rotation, replay).

-- A row id the Opt-outs page's undo names: a form never carries the number itself.
alter table opt_outs add column id bigint generated always as identity;
create unique index opt_outs_id_idx on opt_outs (id);
create index opt_outs_listing_idx on opt_outs (workspace_id, created_at desc, id desc);

-- A rotated secret keeps signing, beside the new one, until `previous_secret_until`: a receiver
-- switches over within that window without missing a delivery. Encrypted as `secret` is.
alter table webhook_endpoints
  add column previous_secret bytea,
  add column previous_secret_until timestamptz;

-- Test events and replays go through the outbox and the delivery runs like any event. A test
-- event is marked (`test` in its body); a replay carries its original's body and webhook-id,
-- once per click (`replay_key`, from the form that asked for it).
alter table webhook_events
  add column test boolean not null default false,
  add column replay_of bigint references webhook_events on delete cascade,
  add column replay_key text;
create unique index webhook_events_replay_idx on webhook_events (replay_of, replay_key)
  where replay_of is not null;

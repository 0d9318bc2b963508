-- Provider throughput limits, opt-out links and replies, and the validity period of messages.

-- Submissions per second a workspace provider takes; null falls back to its adapter's default.
alter table providers add column messages_per_second integer
  check (messages_per_second between 1 and 10000);

-- The next free submission slot of each rate-limited provider, shared by every worker: a batch
-- reserves its slots with one update and paces itself to them (activities/throughput.ts).
create table provider_send_slots (
  provider_key text primary key,
  next_slot_at timestamptz not null
);

-- How a recipient opted out: the link in a marketing message, a STOP reply, or an operator.
alter table opt_outs add column source text not null default 'operator'
  check (source in ('link', 'reply', 'operator'));

-- The short link `{PUBLIC_URL}/o/<token>` that replaces `{opt_out_url}`: one per workspace and
-- recipient, reused by every marketing message to them.
create table opt_out_links (
  token text primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  recipient text not null,
  created_at timestamptz not null default now(),
  unique (workspace_id, recipient)
);

-- A message not submitted by then is failed, not sent late.
alter table campaigns add column valid_until timestamptz;

-- SMS segments per message as sent: with a marketing message's opt-out link at its real length.
alter table campaigns add column segments integer;

-- Campaigns (one per send request) and their messages (one row per recipient).

create table campaigns (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  api_key_id bigint references api_keys on delete set null,
  -- How the batch was created: the REST API, a dashboard Quick Send, or a dashboard campaign.
  source text not null default 'api' check (source in ('api', 'quick_send', 'campaign')),
  reference text check (length(reference) <= 100),
  purpose text not null check (purpose in ('transactional', 'marketing')),
  body text not null,
  sender_id text,
  routing_type text not null check (routing_type in ('direct', 'failover')),
  provider_slug text,
  failover_route_slug text,
  status text not null check (status in ('paused', 'queued', 'completed')),
  batch_id uuid not null default gen_random_uuid(),
  requested_recipients integer not null,
  excluded_recipients integer not null default 0,
  workflow_id text,
  created_at timestamptz not null default now(),
  completed_at timestamptz
);
create index campaigns_workspace_idx on campaigns (workspace_id, id desc);

create table campaign_messages (
  campaign_id bigint not null references campaigns on delete cascade,
  seq integer not null,
  recipient text not null,
  status text not null default 'queued' check (status in ('queued', 'sent', 'failed')),
  provider_slug text,
  provider_message_id text,
  error text,
  submitted_at timestamptz,
  primary key (campaign_id, seq)
);
create index campaign_messages_status_idx on campaign_messages (campaign_id, status);

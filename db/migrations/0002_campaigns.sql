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
  -- Set before a submission leaves Herald: a queued row with an attempt has an unknown outcome.
  attempt_provider text,
  attempt_started_at timestamptz,
  provider_slug text,
  provider_message_id text,
  error text,
  submitted_at timestamptz,
  delivery_status text check (delivery_status in ('delivered', 'undelivered')),
  delivery_error_code text,
  delivered_at timestamptz,
  primary key (campaign_id, seq)
);
create index campaign_messages_status_idx on campaign_messages (campaign_id, status);
create unique index campaign_messages_provider_id_key on campaign_messages (provider_slug, provider_message_id)
  where provider_message_id is not null;

-- Workspace providers and failover routes. The `own` provider is the operator's, from config.
create table providers (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  slug text not null check (slug ~ '^[a-z0-9][a-z0-9_-]{0,62}$' and slug <> 'own'),
  name text not null,
  type text not null check (type in ('simulator')),
  active boolean not null default true,
  requires_sender_id boolean not null default false,
  -- Non-secret settings such as the base URL; credentials arrive with the real adapters.
  settings jsonb not null default '{}',
  created_at timestamptz not null default now(),
  unique (workspace_id, slug)
);

create table failover_routes (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  slug text not null check (slug ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  name text not null,
  enabled boolean not null default true,
  -- Tried in order; each is a provider slug of the workspace or `own`.
  provider_slugs text[] not null check (cardinality(provider_slugs) between 1 and 5),
  created_at timestamptz not null default now(),
  unique (workspace_id, slug)
);

create table opt_outs (
  workspace_id bigint not null references workspaces on delete cascade,
  recipient text not null,
  created_at timestamptz not null default now(),
  primary key (workspace_id, recipient)
);

-- Tenancy, people, API keys and idempotency records.

create table workspaces (
  id bigint generated always as identity primary key,
  slug text not null unique check (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$'),
  name text not null check (length(name) between 1 and 200),
  -- The workspace's API entitlement: REST keys and MCP connections stop working without it.
  api_enabled boolean not null default true,
  created_at timestamptz not null default now()
);

create table users (
  id bigint generated always as identity primary key,
  email text not null check (email like '%_@_%'),
  -- PHC string of a memory-hard KDF (scrypt).
  password_hash text not null,
  created_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

create table workspace_members (
  workspace_id bigint not null references workspaces on delete cascade,
  user_id bigint not null references users on delete cascade,
  role text not null check (role in ('owner', 'admin', 'developer', 'viewer')),
  permissions text[] not null,
  status text not null default 'active' check (status in ('active', 'suspended')),
  created_at timestamptz not null default now(),
  primary key (workspace_id, user_id)
);
create index workspace_members_user_idx on workspace_members (user_id);

create table invitations (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  email text not null,
  role text not null check (role in ('owner', 'admin', 'developer', 'viewer')),
  token_hash bytea not null unique,
  invited_by bigint references users on delete set null,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index invitations_pending_idx on invitations (workspace_id)
  where accepted_at is null and revoked_at is null;

create table api_keys (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  -- The member the key acts for; null for a workspace-level key.
  user_id bigint references users on delete cascade,
  name text,
  prefix text not null unique,
  token_hash bytea not null unique,
  abilities text[] not null check (cardinality(abilities) > 0),
  routing_type text check (routing_type in ('direct', 'failover')),
  provider_slug text,
  failover_route_slug text,
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now(),
  check (
    (routing_type is null and provider_slug is null and failover_route_slug is null)
    or (routing_type = 'direct' and failover_route_slug is null)
    or (routing_type = 'failover' and provider_slug is null and failover_route_slug is not null)
  )
);
create index api_keys_workspace_idx on api_keys (workspace_id);

create table idempotency_keys (
  workspace_id bigint not null references workspaces on delete cascade,
  endpoint text not null,
  key text not null,
  request_hash bytea not null,
  status text not null check (status in ('processing', 'completed')),
  -- The resource the first request created, so a retry finishes that one instead of a new one.
  resource_id text,
  response_status integer,
  response_body text,
  -- A processing record whose lease has passed belongs to a request that died; a retry takes over.
  locked_until timestamptz not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (workspace_id, endpoint, key)
);
create index idempotency_keys_expiry_idx on idempotency_keys (expires_at);

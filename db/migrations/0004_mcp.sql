-- MCP reporting: named campaigns, reporting tables kept by triggers, and the OAuth records.

-- Operators start named campaigns (`herald campaign create`); API sends are Quick Send batches.
alter table campaigns add column name text check (length(name) between 1 and 200);
-- Null marks a batch recorded without source metadata; reports show it as `unknown`.
alter table campaigns alter column source drop not null;

-- One row per batch, everything the MCP tools show about it. Kept current by the triggers
-- below, in the same transaction as the write to campaigns or campaign_messages, so every
-- code path (activities, receipts, CLI) updates it exactly once.
create table report_batches (
  campaign_id bigint primary key references campaigns on delete cascade,
  workspace_id bigint not null references workspaces on delete cascade,
  kind text not null check (kind in ('campaign', 'quick_send')),
  -- Quick Send only: `quick_send` (dashboard) or `api`; null means unknown.
  source text check (source in ('quick_send', 'api')),
  name text,
  status text not null,
  purpose text not null,
  routing_type text not null,
  provider_slug text,
  provider_name text,
  failover_route_slug text,
  failover_route_name text,
  created_at timestamptz not null,
  completed_at timestamptz,
  recipients integer not null default 0,
  sent integer not null default 0,
  failed_to_send integer not null default 0,
  delivered integer not null default 0,
  delivery_failed integer not null default 0
);
create index report_batches_recent_idx on report_batches (workspace_id, kind, campaign_id desc);
create index report_batches_completed_idx on report_batches (workspace_id, completed_at)
  where kind = 'campaign';

-- Delivery history per workspace and minute, for the rolling summaries: messages submitted,
-- delivered and failed (to send, or undelivered) by their own timestamps, and of the messages
-- submitted in that minute, those still awaiting a receipt.
create table report_delivery_minutes (
  workspace_id bigint not null references workspaces on delete cascade,
  minute timestamptz not null,
  sent integer not null default 0,
  delivered integer not null default 0,
  failed integer not null default 0,
  awaiting integer not null default 0,
  primary key (workspace_id, minute)
);

create function report_batch_row() returns trigger language plpgsql as $$
begin
  insert into report_batches as r (campaign_id, workspace_id, kind, source, name, status, purpose,
    routing_type, provider_slug, provider_name, failover_route_slug, failover_route_name,
    created_at, completed_at)
  select new.id, new.workspace_id,
    case when new.source = 'campaign' then 'campaign' else 'quick_send' end,
    case when new.source in ('quick_send', 'api') then new.source end,
    new.name, new.status, new.purpose, new.routing_type,
    new.provider_slug,
    case when new.provider_slug = 'own' then 'Herald' else p.name end,
    new.failover_route_slug, f.name, new.created_at, new.completed_at
  from (select 1) one
  left join providers p on p.workspace_id = new.workspace_id and p.slug = new.provider_slug
  left join failover_routes f on f.workspace_id = new.workspace_id and f.slug = new.failover_route_slug
  on conflict (campaign_id) do update set
    name = excluded.name, status = excluded.status, completed_at = excluded.completed_at;
  return null;
end $$;

create trigger campaigns_report after insert or update of name, status, completed_at on campaigns
  for each row execute function report_batch_row();

create function report_recipients_added() returns trigger language plpgsql as $$
begin
  update report_batches r set recipients = r.recipients + added.count
  from (select campaign_id, count(*)::int as count from new_rows group by campaign_id) added
  where r.campaign_id = added.campaign_id;
  return null;
end $$;

create trigger campaign_messages_report_insert after insert on campaign_messages
  referencing new table as new_rows
  for each statement execute function report_recipients_added();

-- A receipt counts once its message is sent; one that overtook the submission counts then.
create function report_message_changes() returns trigger language plpgsql as $$
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
      delivered = r.delivered + d.delivered, delivery_failed = r.delivery_failed + d.delivery_failed
    from (
      select campaign_id,
        sum((new_status = 'sent')::int - (old_status = 'sent')::int) as sent,
        sum((new_status = 'failed')::int - (old_status = 'failed')::int) as failed_to_send,
        sum((new_receipt is not distinct from 'delivered')::int
          - (old_receipt is not distinct from 'delivered')::int) as delivered,
        sum((new_receipt is not distinct from 'undelivered')::int
          - (old_receipt is not distinct from 'undelivered')::int) as delivery_failed
      from changes group by campaign_id
    ) d
    where r.campaign_id = d.campaign_id
  )
  insert into report_delivery_minutes as m (workspace_id, minute, sent, delivered, failed, awaiting)
  select workspace_id, minute, sum(sent), sum(delivered), sum(failed), sum(awaiting)
  from (
    select workspace_id, date_trunc('minute', coalesce(new_submitted_at, now())) as minute,
      1 as sent, 0 as delivered, 0 as failed, 0 as awaiting
    from changes where new_status = 'sent' and old_status is distinct from 'sent'
    union all
    select workspace_id, date_trunc('minute', now()), 0, 0, 1, 0
    from changes where new_status = 'failed' and old_status is distinct from 'failed'
    union all
    select workspace_id, date_trunc('minute', old_delivered_at),
      0, -(old_receipt = 'delivered')::int, -(old_receipt = 'undelivered')::int, 0
    from changes where old_receipt is not null
    union all
    select workspace_id, date_trunc('minute', new_delivered_at),
      0, (new_receipt = 'delivered')::int, (new_receipt = 'undelivered')::int, 0
    from changes where new_receipt is not null
    union all
    select workspace_id, date_trunc('minute', coalesce(old_submitted_at, now())), 0, 0, 0, -1
    from changes where old_status = 'sent' and old_receipt is null
    union all
    select workspace_id, date_trunc('minute', coalesce(new_submitted_at, now())), 0, 0, 0, 1
    from changes where new_status = 'sent' and new_receipt is null
  ) contributions
  group by workspace_id, minute
  having sum(sent) <> 0 or sum(delivered) <> 0 or sum(failed) <> 0 or sum(awaiting) <> 0
  on conflict (workspace_id, minute) do update set
    sent = m.sent + excluded.sent, delivered = m.delivered + excluded.delivered,
    failed = m.failed + excluded.failed, awaiting = m.awaiting + excluded.awaiting;
  return null;
end $$;

create trigger campaign_messages_report_update after update on campaign_messages
  referencing old table as old_rows new table as new_rows
  for each statement execute function report_message_changes();

-- Batches that existed before reporting began.
insert into report_batches (campaign_id, workspace_id, kind, source, name, status, purpose,
  routing_type, provider_slug, provider_name, failover_route_slug, failover_route_name,
  created_at, completed_at, recipients, sent, failed_to_send, delivered, delivery_failed)
select c.id, c.workspace_id, case when c.source = 'campaign' then 'campaign' else 'quick_send' end,
  case when c.source in ('quick_send', 'api') then c.source end, c.name, c.status, c.purpose,
  c.routing_type, c.provider_slug, case when c.provider_slug = 'own' then 'Herald' else p.name end,
  c.failover_route_slug, f.name, c.created_at, c.completed_at,
  count(m.seq), count(*) filter (where m.status = 'sent'), count(*) filter (where m.status = 'failed'),
  count(*) filter (where m.status = 'sent' and m.delivery_status = 'delivered'),
  count(*) filter (where m.status = 'sent' and m.delivery_status = 'undelivered')
from campaigns c
left join campaign_messages m on m.campaign_id = c.id
left join providers p on p.workspace_id = c.workspace_id and p.slug = c.provider_slug
left join failover_routes f on f.workspace_id = c.workspace_id and f.slug = c.failover_route_slug
group by c.id, p.name, f.name;

-- Failures to send have no timestamp of their own before this migration: the attempt's is used.
insert into report_delivery_minutes (workspace_id, minute, sent, delivered, failed, awaiting)
select workspace_id, minute, sum(sent), sum(delivered), sum(failed), sum(awaiting)
from (
  select c.workspace_id, date_trunc('minute', m.submitted_at) as minute, 1 as sent,
    0 as delivered, 0 as failed, (m.delivery_status is null)::int as awaiting
  from campaign_messages m join campaigns c on c.id = m.campaign_id where m.status = 'sent'
  union all
  select c.workspace_id, date_trunc('minute', m.delivered_at), 0,
    (m.delivery_status = 'delivered')::int, (m.delivery_status = 'undelivered')::int, 0
  from campaign_messages m join campaigns c on c.id = m.campaign_id
  where m.status = 'sent' and m.delivery_status is not null
  union all
  select c.workspace_id, date_trunc('minute', coalesce(m.attempt_started_at, c.created_at)), 0, 0, 1, 0
  from campaign_messages m join campaigns c on c.id = m.campaign_id where m.status = 'failed'
) contributions
group by workspace_id, minute;

-- OAuth 2.0 authorization server for /mcp (RFC 6749, 7591, 7636, 7009, 8707).

create table oauth_clients (
  id text primary key,
  name text not null,
  redirect_uris text[] not null check (cardinality(redirect_uris) between 1 and 10),
  token_endpoint_auth_method text not null
    check (token_endpoint_auth_method in ('none', 'client_secret_post')),
  secret_hash bytea,
  -- The registration as the client sent it (client_uri, software_id, ...), echoed back.
  metadata jsonb not null default '{}',
  registered_from inet,
  created_at timestamptz not null default now()
);
create index oauth_clients_created_idx on oauth_clients (created_at);

-- Sliding-window limit on registrations, shared by every api process.
create table oauth_registration_attempts (
  ip inet not null,
  at timestamptz not null default now()
);
create index oauth_registration_attempts_idx on oauth_registration_attempts (ip, at);

-- An authorization request between /authorize and the consent decision.
create table oauth_authorizations (
  id uuid primary key default gen_random_uuid(),
  client_id text not null references oauth_clients on delete cascade,
  redirect_uri text not null,
  state text,
  code_challenge text not null,
  scope text not null,
  resource text not null,
  -- Set by sign-in; the browser that signed in holds a cookie whose hash this is.
  user_id bigint references users on delete cascade,
  workspace_id bigint references workspaces on delete cascade,
  browser_hash bytea,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);

-- A connection: one approved client per user and workspace. Revoking it ends its tokens.
create table oauth_connections (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  user_id bigint not null references users on delete cascade,
  client_id text not null references oauth_clients on delete cascade,
  scope text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create unique index oauth_connections_active_key on oauth_connections (workspace_id, user_id, client_id)
  where revoked_at is null;
create index oauth_connections_client_idx on oauth_connections (client_id);

create table oauth_codes (
  code_hash bytea primary key,
  connection_id bigint not null references oauth_connections on delete cascade,
  redirect_uri text not null,
  code_challenge text not null,
  resource text not null,
  scope text not null,
  -- Tokens issued from this code, and their refreshes, share it: a replayed code revokes them.
  family uuid not null default gen_random_uuid(),
  expires_at timestamptz not null,
  used_at timestamptz
);

create table oauth_tokens (
  token_hash bytea primary key,
  kind text not null check (kind in ('access', 'refresh')),
  connection_id bigint not null references oauth_connections on delete cascade,
  family uuid not null,
  resource text not null,
  scope text not null,
  expires_at timestamptz not null,
  -- A refresh token is used once; a second use shortly after is a concurrent refresh.
  rotated_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index oauth_tokens_family_idx on oauth_tokens (family);
create index oauth_tokens_connection_idx on oauth_tokens (connection_id);

-- The fraud guard (issue 25): per-recipient OTP send limits, geo permissions, a pumping breaker per
-- number range, a daily spend cap and API rate limits. Settings are the workspace's (one row with
-- no OTP service) and an OTP service's overrides; a setting absent from `settings` is inherited
-- (a service's from its workspace, a workspace's from the built-in defaults, domain/fraud-guard.ts).
create table guard_settings (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  otp_service_id bigint references otp_services on delete cascade,
  settings jsonb not null default '{}',
  updated_at timestamptz not null default now()
);
create unique index guard_settings_workspace_key on guard_settings (workspace_id)
  where otp_service_id is null;
create unique index guard_settings_service_key on guard_settings (otp_service_id);

-- A key's own request rate (`{"requests": 100, "perSeconds": 1}`), else its workspace's.
alter table api_keys add column rate_limit jsonb;

-- Per-recipient limits and the breaker count a recipient's and a range's recent sends.
create index otp_requests_recipient_recent_idx on otp_requests (workspace_id, recipient, created_at);
-- A range is the number without its last 4 digits (domain/fraud-guard.ts, rangeOf).
create index otp_requests_range_recent_idx
  on otp_requests (workspace_id, left(recipient, -4), created_at);

-- Ranges the breaker blocked: recorded once per trip, until `blocked_until` or an admin lifts it.
create table guard_blocked_ranges (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  range text not null,
  blocked_at timestamptz not null default now(),
  blocked_until timestamptz not null,
  sends integer not null,
  verified integer not null,
  lifted_at timestamptz,
  lifted_by text
);
create index guard_blocked_ranges_active_idx
  on guard_blocked_ranges (workspace_id, range, blocked_until desc);

-- Segments accepted per workspace and UTC day, kept while the workspace has a daily cap.
create table guard_daily_usage (
  workspace_id bigint not null references workspaces on delete cascade,
  day date not null,
  segments bigint not null,
  primary key (workspace_id, day)
);

-- Refusals per workspace, UTC day and rule, for the operator's chart and counts.
create table guard_refusals (
  workspace_id bigint not null references workspaces on delete cascade,
  day date not null,
  rule text not null,
  refusals bigint not null,
  primary key (workspace_id, day, rule)
);

-- Token buckets of the API rate limits, shared by every api replica: `key:<id>`, `workspace:<id>`.
-- Unlogged: a bucket is written on every request, and a crash that empties the table only refills
-- the buckets, so it costs no WAL and no commit flush. Rows are updated in place: room for HOT.
create unlogged table rate_buckets (
  key text primary key,
  tokens double precision not null,
  refreshed_at timestamptz not null
) with (fillfactor = 50);

-- The guard acts on its own (a breaker trip) as `guard`.
alter table audit_log drop constraint audit_log_source_check;
alter table audit_log add constraint audit_log_source_check
  check (source in ('console', 'cli', 'guard'));

-- Endpoints may subscribe to the guard's events.
alter table webhook_endpoints drop constraint webhook_endpoints_events_check;
alter table webhook_endpoints add constraint webhook_endpoints_events_check check (
  cardinality(events) > 0
  and events <@ array['message.sent', 'message.delivered', 'message.failed', 'campaign.completed',
    'otp.accepted', 'otp.verified', 'otp.expired', 'otp.range_blocked', 'spend.cap_near']::text[]
);

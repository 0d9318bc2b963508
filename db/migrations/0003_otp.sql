-- One-time passcodes: templates, approved senders, saved OTP services, requests, failed
-- verifications, and the append-only credit ledger that pays for own-provider sends.

create table message_templates (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  slug text not null check (slug ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  name text not null,
  body text not null check (length(body) between 1 and 1600),
  purpose text not null check (purpose in ('transactional', 'marketing')),
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  unique (workspace_id, slug)
);

-- Sender names and numbers registered with a provider; only approved ones may be used.
create table sender_ids (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  provider_slug text not null,
  sender text not null check (length(sender) between 1 and 50),
  approved boolean not null default false,
  created_at timestamptz not null default now(),
  unique (workspace_id, provider_slug, sender)
);

-- A saved OTP configuration; requests copy its settings, so editing or deleting it never
-- affects a code already sent.
create table otp_services (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  slug uuid not null unique default gen_random_uuid(),
  name text not null,
  purpose text not null check (purpose ~ '^[A-Za-z0-9._:-]{1,100}$'),
  code_length integer not null default 6 check (code_length between 6 and 8),
  expires_in_minutes integer not null default 5 check (expires_in_minutes between 1 and 10),
  template_slug text,
  message_template text,
  sender_id text check (length(sender_id) <= 50),
  provider_slug text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (template_slug is null or message_template is null)
);

create table otp_requests (
  id uuid primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  api_key_id bigint references api_keys on delete set null,
  -- The API key's user: "the same user" of SPEC §3. Null for a key without a user.
  user_id bigint references users on delete set null,
  recipient text not null,
  purpose text not null,
  service_slug uuid,
  -- The message with its `{code}` placeholder; the code itself is never stored.
  body_template text not null,
  segments integer not null,
  code_length integer not null,
  -- HMAC of the code with HERALD_SECRET, written before the submission leaves Herald.
  code_hash bytea,
  sender_id text,
  provider_slug text not null,
  status text not null default 'pending' check (status in ('pending', 'accepted', 'failed')),
  attempt_started_at timestamptz,
  provider_message_id text,
  error text,
  expires_at timestamptz not null,
  verified_at timestamptz,
  superseded_at timestamptz,
  -- How the workflow ended.
  outcome text check (outcome in ('verified', 'expired', 'superseded', 'failed')),
  billing_source text not null check (billing_source in ('credits', 'connected_provider')),
  delivery_status text check (delivery_status in ('delivered', 'undelivered')),
  delivery_error_code text,
  delivered_at timestamptz,
  workflow_id text,
  created_at timestamptz not null default now()
);
create index otp_requests_latest_idx
  on otp_requests (workspace_id, recipient, purpose, created_at desc);
create unique index otp_requests_provider_id_key on otp_requests (provider_slug, provider_message_id)
  where provider_message_id is not null;

-- Failed verifications per user, recipient and purpose: five in 15 minutes lock the codes out.
create table otp_verification_failures (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  user_id bigint,
  recipient text not null,
  purpose text not null,
  failed_at timestamptz not null default now()
);
create index otp_verification_failures_idx
  on otp_verification_failures (workspace_id, recipient, purpose, failed_at desc);

-- Append-only: a top-up adds, an own-provider send charges per segment, a failed send is
-- refunded. The balance on workspaces is the ledger's sum, kept in the same transaction.
create table credit_ledger (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces on delete cascade,
  amount bigint not null check (amount <> 0),
  reason text not null check (reason in ('top_up', 'otp_charge', 'otp_refund')),
  otp_request_id uuid references otp_requests on delete set null,
  created_at timestamptz not null default now()
);
create index credit_ledger_workspace_idx on credit_ledger (workspace_id, id);
create unique index credit_ledger_once_idx on credit_ledger (otp_request_id, reason)
  where otp_request_id is not null;

alter table workspaces add column credit_balance bigint not null default 0
  check (credit_balance >= 0);

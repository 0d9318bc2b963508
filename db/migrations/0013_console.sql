-- The web console (console/): browser sessions, the audit log, and a TOTP second factor.

-- A signed-in browser. The cookie holds a random token; only its SHA-256 is stored. A session
-- ends when revoked (sign-out, a password or factor change), after its idle timeout since
-- last_seen_at, or at expires_at (the absolute timeout), whichever comes first.
create table console_sessions (
  id bigint generated always as identity primary key,
  token_hash bytea not null unique,
  user_id bigint not null references users on delete cascade,
  -- The workspace the session is signed in to; switching workspace changes it.
  workspace_id bigint not null references workspaces on delete cascade,
  -- Signed in with the password but the TOTP code is still due: no page but the code's opens.
  second_factor_pending boolean not null default false,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  address inet,
  user_agent text
);
create index console_sessions_user_idx on console_sessions (user_id);
create index console_sessions_expires_idx on console_sessions (expires_at);

-- Who did what, when and from where: every state-changing action of the console or the CLI.
create table audit_log (
  id bigint generated always as identity primary key,
  workspace_id bigint references workspaces on delete cascade,
  user_id bigint references users on delete set null,
  -- The actor as shown (an email, or `operator` for the CLI), kept when the user is deleted.
  actor text not null,
  source text not null check (source in ('console', 'cli')),
  action text not null,
  -- What the action was on, as shown: `API key hld_ab12cd34`, `member ana@example.com`.
  target text,
  details jsonb not null default '{}',
  address inet,
  user_agent text,
  at timestamptz not null default now()
);
create index audit_log_workspace_idx on audit_log (workspace_id, id desc);

-- TOTP (RFC 6238): the user's secret, encrypted with HERALD_SECRET's credentials key; in use once
-- totp_enabled_at is set (the first code confirmed); the last accepted time step, so a code is used once.
alter table users add column totp_secret bytea;
alter table users add column totp_enabled_at timestamptz;
alter table users add column totp_last_step bigint;
-- An owner may require every member to use a second factor.
alter table workspaces add column require_second_factor boolean not null default false;

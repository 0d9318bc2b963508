-- One-time links with which a member sets a new password after an owner or admin resets it
-- (commands/team/passwords.ts). Only the token's keyed hash is kept; a newer link for the same
-- user replaces the older one, and a used or expired link is refused.
create table password_resets (
  id bigint generated always as identity primary key,
  user_id bigint not null references users on delete cascade,
  workspace_id bigint not null references workspaces on delete cascade,
  token_hash bytea not null unique,
  created_by_user_id bigint references users on delete set null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index password_resets_user_idx on password_resets (user_id);

-- The console's OTP activity (db/otp-activity.ts) reads one workspace's requests of the last days,
-- newest first.
create index otp_requests_workspace_created_idx on otp_requests (workspace_id, created_at desc);

-- Failed password sign-ins (commands/team/sign-in.ts): one row per failure and subject, a subject being
-- an account (by email) or a client address, each stored only as a keyed hash so that arbitrary
-- input takes a fixed 32 bytes. An attempt is recorded before its password is checked, so that
-- concurrent guesses count against the limit before any of them is answered.
create table sign_in_failures (
  id bigint generated always as identity primary key,
  subject bytea not null,
  failed_at timestamptz not null default now()
);
create index sign_in_failures_subject_idx on sign_in_failures (subject, failed_at);
create index sign_in_failures_failed_idx on sign_in_failures (failed_at);

-- Daily maintenance deletes OAuth records a day after they expired (or were made, for the
-- registration limit's attempts), in batches found by these.
create index oauth_authorizations_expires_idx on oauth_authorizations (expires_at);
create index oauth_codes_expires_idx on oauth_codes (expires_at);
create index oauth_tokens_expires_idx on oauth_tokens (expires_at);
create index oauth_registration_attempts_at_idx on oauth_registration_attempts (at);

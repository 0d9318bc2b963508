-- An OTP send's Idempotency-Key is scoped by workspace and user (issue 24, item 9): a code is
-- verified by the user whose key asked for it, so another user's key with the same key and body
-- must get a request of its own, not a replay of one it can never verify. SMS keys stay the
-- workspace's (a campaign belongs to the workspace): their records keep user_id 0, as do OTP keys
-- of API keys without a user. Adding a column with a constant default rewrites nothing.
alter table idempotency_keys add column user_id bigint not null default 0;

-- The OTP keys already there belong to the user whose request they tied themselves to, so each
-- still replays for that user, and only for them. A key whose request was not saved yet (its
-- first attempt still running as this ran) stays the workspace's: its user's retry starts afresh.
update idempotency_keys k set user_id = r.user_id
from otp_requests r
where k.endpoint = 'POST /api/v1/otp/send' and r.id::text = k.resource_id
  and r.workspace_id = k.workspace_id and r.user_id is not null;

alter table idempotency_keys
  drop constraint idempotency_keys_pkey,
  add primary key (workspace_id, endpoint, key, user_id);

-- SMPP providers: receipts arrive over the bind, named only by the SMSC's message id.

-- An SMSC's message ids are unique on that SMSC only: two workspaces' SMSCs (behind providers with
-- the same slug) can both answer "1", and an SMSC may start counting again after a restart. The
-- provider id is therefore no key; receipts pick the workspace's latest message with that id.
drop index campaign_messages_provider_id_key;
create index campaign_messages_provider_id_idx on campaign_messages (provider_slug, provider_message_id)
  where provider_message_id is not null;
drop index otp_requests_provider_id_key;
create index otp_requests_provider_id_idx
  on otp_requests (workspace_id, provider_slug, provider_message_id)
  where provider_message_id is not null;

-- The ids of a long message's later parts (the first part's id is the message's), so that a
-- receipt for any part reaches the message.
create table smpp_message_parts (
  workspace_id bigint not null references workspaces on delete cascade,
  provider_slug text not null,
  part_message_id text not null,
  message_id text not null,
  created_at timestamptz not null default now(),
  primary key (workspace_id, provider_slug, part_message_id)
);
create index smpp_message_parts_message_idx
  on smpp_message_parts (workspace_id, provider_slug, message_id);
create index smpp_message_parts_created_idx on smpp_message_parts (created_at);

-- Receipts that arrived before their message was settled (a batch settles after all its
-- submissions are answered; the SMSC may report delivery sooner). The latest per id is kept and
-- applied, then deleted, when the message settles (settleMessages, markOtpAccepted).
create table smpp_pending_receipts (
  workspace_id bigint not null references workspaces on delete cascade,
  provider_slug text not null,
  provider_message_id text not null,
  status text not null check (status in ('delivered', 'undelivered', 'unknown')),
  error_code text,
  at timestamptz not null,
  received_at timestamptz not null default now(),
  primary key (workspace_id, provider_slug, provider_message_id)
);
create index smpp_pending_receipts_received_idx on smpp_pending_receipts (received_at);

-- A campaign message claimed for a provider that cannot look messages up (SMPP) is claimed with a
-- write batch: the claim commits first, then the batch's row in submission_writes commits in a
-- transaction whose COMMIT is sent right before the batch's PDUs are written (db/submission-writes.ts).
-- A successor finds a claim whose batch has no row, made since Postgres last started, and knows
-- nothing of it left Herald: it sends it, instead of failing it as outcome unknown.
alter table campaign_messages
  add column attempt_batch uuid,
  add column attempt_epoch timestamptz;

create table submission_writes (
  batch uuid primary key,
  written_at timestamptz not null default now()
);

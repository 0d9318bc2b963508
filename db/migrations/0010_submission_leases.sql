-- Fenced provider submissions (activities/lease.ts). A campaign chunk is worked by one activity
-- attempt at a time: the attempt that holds the chunk's lease. Tokens come from one sequence, so
-- an attempt started later always carries a larger token than any attempt before it.
create sequence submission_lease_tokens;

create table submission_leases (
  -- What is held, e.g. `campaign/42/101` (campaign 42, the chunk starting at seq 101).
  lease_key text primary key,
  token bigint not null,
  -- By Postgres's clock. A successor takes over only after this, never before.
  expires_at timestamptz not null,
  -- The newest attempt waiting for the lease: a holder may not renew once a newer one waits.
  wanted_by bigint
);
create index submission_leases_expires_idx on submission_leases (expires_at);

-- The recipients a send left out (issue 27, per-recipient status over REST): a marketing send's
-- opted-out numbers, which campaigns.excluded_recipients only counted. Kept per recipient so
-- GET /api/v1/messages/{campaign}/recipients lists them as `excluded`. Their seq continues after
-- the campaign's messages (1..n are messages, n+1.. exclusions, in request order), so one keyset
-- over seq pages through both. Nothing sends, counts or reports from this table; retention and
-- erasure mask its numbers as they mask campaign_messages'.
create table campaign_exclusions (
  campaign_id bigint not null references campaigns on delete cascade,
  seq integer not null,
  recipient text not null,
  reason text not null check (reason in ('opted_out')),
  primary key (campaign_id, seq)
);

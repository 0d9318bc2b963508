-- Idempotency-Key leases that follow their holder (api/services/idempotency.ts): each claim draws
-- a fresh token, and the holder's renewals, its resource and its answer are written only while
-- the record still carries that token, so a request whose key another has taken over writes
-- nothing. Null on records claimed before this migration and on released ones.
alter table idempotency_keys add column claim_token uuid;

-- Orphan campaigns (db/orphan-campaigns.ts) are looked for among paused ones, daily.
create index campaigns_paused_idx on campaigns (id) where status = 'paused';

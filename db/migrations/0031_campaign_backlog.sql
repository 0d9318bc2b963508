-- The campaign backlog the metrics read on every scrape (db/operations.ts): campaigns still
-- sending, found without reading the whole campaigns table.
create index campaigns_queued_idx on campaigns (created_at) where status = 'queued';

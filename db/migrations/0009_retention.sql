-- Daily maintenance deletes webhook events (with their attempts) a while after dispatch, and
-- throughput slots nobody has reserved for a day.
create index webhook_events_dispatched_idx on webhook_events (dispatched_at)
  where dispatched_at is not null;

-- Quiet hours for marketing (issue 27): a workspace's daily window, in each recipient's local
-- time, in which its marketing messages may go out (null: no quiet hours, the default). A message
-- outside its recipient's window stays queued with the time its window opens, and its campaign's
-- run waits on a durable timer until then.

alter table workspaces
  add column quiet_hours_start smallint,
  add column quiet_hours_end smallint,
  add constraint workspaces_quiet_hours_check check (
    (quiet_hours_start is null and quiet_hours_end is null)
    or (quiet_hours_start between 0 and 1439 and quiet_hours_end between 0 and 1439
        and quiet_hours_start <> quiet_hours_end));

comment on column workspaces.quiet_hours_start is
  'Minutes after local midnight when marketing may start going out; start > end spans midnight';

-- Set while a queued message waits for its recipient's window; cleared when it is sent or failed.
alter table campaign_messages add column held_until timestamptz;

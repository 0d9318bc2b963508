-- Personalised campaigns (issue 27, item 4): each message's own text, rendered from the request's
-- variables when the campaign is saved, and that text's segments. Both null for a campaign whose
-- recipients all get campaigns.body. Like campaigns.body, the text is personal data: retention
-- empties it with the campaign's body (db/retention.ts), erasing a number empties its own
-- message's text and masks the number where another text quotes it (db/recipient-erasure.ts).
-- Nullable without a default: adding them rewrites nothing.
alter table campaign_messages
  add column body text,
  add column segments integer check (segments > 0);

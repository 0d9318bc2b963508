-- Retention and erasure of personal data (README "Retention and erasure", db/retention.ts,
-- db/recipient-erasure.ts). After RETENTION_DAYS the daily maintenance drops a completed campaign's
-- body and masks its messages' recipients, and does the same to an OTP request's text and
-- recipient; the time it did so marks the row as done. No counter, report table or trigger reads
-- a body or a recipient, so every figure stays as it was.
alter table campaigns add column personal_data_dropped_at timestamptz;
alter table otp_requests add column personal_data_dropped_at timestamptz;

-- The rows still holding personal data, oldest first: what each bounded batch takes.
create index campaigns_retention_idx on campaigns (created_at)
  where personal_data_dropped_at is null and status = 'completed';
create index otp_requests_retention_idx on otp_requests (created_at)
  where personal_data_dropped_at is null;

-- Failed verifications count for 15 minutes; retention deletes those older than its window.
create index otp_verification_failures_failed_idx on otp_verification_failures (failed_at);

-- A number as the console shows it to a member without recipients.read (domain/phone.ts
-- maskedNumber): `+61412345678` → `•••• 5678`. What retention and erasure leave of a recipient.
create function herald_masked_number(number text) returns text language sql immutable as $$
  select '•••• ' || right(number, 4)
$$;

-- `body` with the number masked wherever it occurs, with its + or without (a provider's error
-- text, a webhook payload, a stored response, an audit entry).
create function herald_scrub_number(body text, number text) returns text language sql immutable as $$
  select replace(replace(body, number, herald_masked_number(number)),
                 ltrim(number, '+'), herald_masked_number(number))
$$;

-- Real provider adapters: Twilio now, SMPP later. Their credentials are stored only as
-- AES-256-GCM ciphertext (security/credentials.ts), keyed from HERALD_SECRET.

alter table providers drop constraint providers_type_check;
alter table providers add constraint providers_type_check
  check (type in ('simulator', 'twilio', 'smpp'));
alter table providers add column credentials bytea;

-- A receipt whose status Herald cannot map is kept as `unknown`, never dropped. Reporting
-- (0004_mcp.sql) counts it as neither delivered nor failed.
alter table campaign_messages drop constraint campaign_messages_delivery_status_check;
alter table campaign_messages add constraint campaign_messages_delivery_status_check
  check (delivery_status in ('delivered', 'undelivered', 'unknown'));
alter table otp_requests drop constraint otp_requests_delivery_status_check;
alter table otp_requests add constraint otp_requests_delivery_status_check
  check (delivery_status in ('delivered', 'undelivered', 'unknown'));

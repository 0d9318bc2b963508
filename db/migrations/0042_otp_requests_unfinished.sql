-- Requests no run has finished yet (outcome unset): the maintenance sweep looks among them for
-- those whose code a first try submitted beside the start while Temporal was away, which no run
-- finishes unless the request is retried with its key (db/otp-requests.ts finishRunlessOtpRequests).
create index otp_requests_unfinished_idx on otp_requests (expires_at) where outcome is null;

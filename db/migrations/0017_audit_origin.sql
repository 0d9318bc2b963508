-- Where an audit entry came from when no network address says it: `cli@<hostname>` for an admin
-- command of the `herald` CLI (its actor is then the OS user who ran it, and its source `cli`).
-- Console entries keep their client address (and browser) in `address` and `user_agent`.
alter table audit_log add column origin text check (length(origin) <= 300);

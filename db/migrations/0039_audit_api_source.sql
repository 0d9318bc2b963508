-- A REST call that changes something (a cancel) is audited with its API key as the actor.
alter table audit_log drop constraint audit_log_source_check;
alter table audit_log add constraint audit_log_source_check
  check (source in ('console', 'cli', 'guard', 'api'));

-- A verification's outcome for the metrics (herald_otp_outcomes_total): as 0030's
-- herald_verify_otp, step for step, but telling a wrong code ('failed') from one refused because
-- the recipient's failures reached the limit ('exhausted'). 0030's function stays for replicas of
-- the previous release during a rolling upgrade, now a wrapper of this one: one body of the steps.
create function herald_verify_otp_outcome(
  p_workspace_id bigint,
  p_user_id bigint,
  p_recipient text,
  p_request_id uuid,
  p_purpose text,
  p_code_hashes bytea[],
  p_window_minutes int,
  p_max_failures int
) returns text
language plpgsql
as $$
declare
  candidate record;
begin
  perform pg_advisory_xact_lock(hashtextextended(
    'otp-verify:' || p_workspace_id || ':' || coalesce(p_user_id::text, '-') || ':' || p_recipient,
    0));

  select r.id, r.purpose, r.code_hash,
    (r.status <> 'failed' and r.verified_at is null and r.superseded_at is null
      and r.expires_at > now()) as usable,
    (select count(*) from otp_verification_failures f
      where f.workspace_id = r.workspace_id and f.recipient = r.recipient
        and f.purpose = r.purpose and f.user_id is not distinct from r.user_id
        and f.failed_at > now() - make_interval(mins => p_window_minutes)) as recent_failures
  into candidate
  from otp_requests r
  where r.workspace_id = p_workspace_id and r.recipient = p_recipient
    and r.user_id is not distinct from p_user_id
    and case when p_request_id is null
      then r.purpose = p_purpose and r.code_hash is not null and r.status <> 'failed'
      else r.id = p_request_id end
  order by r.created_at desc
  limit 1
  for update of r;

  if found and candidate.code_hash = any(p_code_hashes) and candidate.usable
      and candidate.recent_failures < p_max_failures then
    update otp_requests set verified_at = now() where id = candidate.id and verified_at is null;
    if found then
      return 'verified';
    end if;
  end if;

  insert into otp_verification_failures (workspace_id, user_id, recipient, purpose)
  values (p_workspace_id, p_user_id, p_recipient, coalesce(candidate.purpose, p_purpose, ''));
  -- No request found leaves recent_failures null: a wrong code, not an exhausted one.
  return case when candidate.recent_failures >= p_max_failures then 'exhausted' else 'failed' end;
end;
$$;

create or replace function herald_verify_otp(
  p_workspace_id bigint,
  p_user_id bigint,
  p_recipient text,
  p_request_id uuid,
  p_purpose text,
  p_code_hashes bytea[],
  p_window_minutes int,
  p_max_failures int
) returns boolean
language sql
as $$
  select herald_verify_otp_outcome(p_workspace_id, p_user_id, p_recipient, p_request_id,
    p_purpose, p_code_hashes, p_window_minutes, p_max_failures) = 'verified';
$$;

-- HERALD_SECRET is a key ring (issue 26, item 9): a code sent before a rotation was hashed under an
-- older key, so a verification passes the code's keyed hash under every key of the ring (and the
-- first scheme's under each), not two. Same steps as 0019's function, which is kept beside this
-- overload so replicas of the previous release keep verifying during a rolling upgrade.
create function herald_verify_otp(
  p_workspace_id bigint,
  p_user_id bigint,
  p_recipient text,
  p_request_id uuid,
  p_purpose text,
  p_code_hashes bytea[],
  p_window_minutes int,
  p_max_failures int
) returns boolean
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
      return true;
    end if;
  end if;

  insert into otp_verification_failures (workspace_id, user_id, recipient, purpose)
  values (p_workspace_id, p_user_id, p_recipient, coalesce(candidate.purpose, p_purpose, ''));
  return false;
end;
$$;

-- An invitation now lives only while its inviter may still make it (domain/access.ts mayInvite):
-- a removal, suspension or demotion revokes the inviter's pending invitations. Those made in the
-- console before this name their inviter only in the audit log, in the console's
-- `invitation.created` entry written just after the invitation, for the same workspace and email.
update invitations i
set invited_by = (
  select a.user_id from audit_log a
  where a.workspace_id = i.workspace_id and a.source = 'console'
    and a.action = 'invitation.created' and a.target = 'invitation ' || i.email
    and a.at >= i.created_at and a.at < i.created_at + interval '1 minute'
  order by a.at, a.id
  limit 1)
where i.invited_by is null and i.accepted_at is null and i.revoked_at is null
  and i.expires_at > now();

-- Then the pending invitations whose inviter was removed, suspended or demoted before this are
-- revoked as such a change revokes them now, each recorded in the audit log.
with revoked as (
  update invitations i
  set revoked_at = now()
  from (
    select i2.id,
      case when m.user_id is null then 'inviter_removed'
           when m.status <> 'active' then 'inviter_suspended'
           else 'inviter_demoted' end as reason
    from invitations i2
    left join workspace_members m on m.workspace_id = i2.workspace_id and m.user_id = i2.invited_by
    where i2.invited_by is not null and i2.accepted_at is null and i2.revoked_at is null
      and i2.expires_at > now()
      and not coalesce(
        m.status = 'active' and m.role in ('owner', 'admin')
          and 'members.read' = any (m.permissions)
          and (i2.role <> 'owner' or m.role = 'owner'),
        false)
  ) stale
  where i.id = stale.id
  returning i.id, i.workspace_id, i.email, stale.reason
)
insert into audit_log (workspace_id, user_id, actor, source, action, target, details, origin)
select workspace_id, null, 'herald migrate', 'cli', 'invitation.revoked', 'invitation ' || email,
       jsonb_build_object('invitation_id', id, 'reason', reason), 'migration 0022'
from revoked;

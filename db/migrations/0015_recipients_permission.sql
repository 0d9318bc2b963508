-- Console reports show recipient numbers masked to their last four digits unless the member has
-- the new permission recipients.read (domain/access.ts). Owners and admins start with every
-- permission, so the ones already here get it too, as a member added in those roles today would;
-- developers and viewers do not, until an owner or admin grants it.
update workspace_members
set permissions = array_append(permissions, 'recipients.read')
where role in ('owner', 'admin') and not ('recipients.read' = any (permissions));

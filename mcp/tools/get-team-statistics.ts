import { z } from 'zod';
import { countTeam } from '../../db/reporting.js';
import { defineTool } from './tool.js';

export const getTeamStatistics = defineTool({
  name: 'get_team_statistics',
  title: 'Team statistics',
  icon: 'team',
  description:
    'Counts the people of this workspace: all members, active members (not suspended), and pending invitations (not yet accepted, revoked or expired). No names or email addresses are returned.',
  inputSchema: {},
  outputSchema: {
    total_members: z.number().int().describe('Members of the workspace, active or suspended.'),
    active_members: z.number().int().describe('Members whose access is not suspended.'),
    pending_invites: z.number().int().describe('Invitations not yet accepted, revoked or expired.'),
  },
  permissions: ['members.read'],
  async run(context) {
    const counts = await countTeam(context.sql, context.caller.workspaceId, context.now());
    return {
      total_members: counts.totalMembers,
      active_members: counts.activeMembers,
      pending_invites: counts.pendingInvites,
    };
  },
});

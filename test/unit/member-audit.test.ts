/**
 * A member's change is recorded by what changed (commands/team/member-audit.ts), whichever door
 * asked: the Team page's forms, a member's permissions page or `herald member update|remove`.
 */
import { describe, expect, it } from 'vitest';
import { invitationsRevokedLines, memberChangeLines } from '../../commands/team/member-audit.js';
import type { Member } from '../../db/members.js';

const was: Member = {
  userId: 3,
  email: 'ann@acme.test',
  role: 'developer',
  status: 'active',
  permissions: ['campaigns.read', 'messages.read'],
};
const target = 'member ann@acme.test';
const withChange = (change: Partial<Member>): Member => ({ ...was, ...change });

describe('a member change’s audit lines', () => {
  it('names a role change, a suspension and a reactivation', () => {
    expect(
      memberChangeLines(was, withChange({ role: 'admin', permissions: ['members.read'] }), {
        role: 'admin',
        permissions: false,
      }),
    ).toEqual([{ action: 'member.role_changed', target, details: { role: 'admin' } }]);
    expect(
      memberChangeLines(was, withChange({ status: 'suspended' }), { permissions: false }),
    ).toEqual([{ action: 'member.suspended', target, details: {} }]);
    expect(
      memberChangeLines(withChange({ status: 'suspended' }), was, { permissions: false }),
    ).toEqual([{ action: 'member.reactivated', target, details: {} }]);
  });

  it('names each permission granted or revoked, with the set it leaves', () => {
    const permissions = 'campaigns.read,recipients.read';
    expect(
      memberChangeLines(was, withChange({ permissions: ['campaigns.read', 'recipients.read'] }), {
        permissions: true,
      }),
    ).toEqual([
      {
        action: 'member.permission_granted',
        target,
        details: { permission: 'recipients.read', permissions },
      },
      {
        action: 'member.permission_revoked',
        target,
        details: { permission: 'messages.read', permissions },
      },
    ]);
  });

  it('records a role given again that resets the permissions, and nothing when nothing changed', () => {
    expect(
      memberChangeLines(was, withChange({ permissions: ['campaigns.read'] }), {
        role: 'developer',
        permissions: false,
      }),
    ).toEqual([{ action: 'member.role_changed', target, details: { role: 'developer' } }]);
    expect(memberChangeLines(was, was, { role: 'developer', permissions: false })).toEqual([]);
    expect(memberChangeLines(was, was, { permissions: true })).toEqual([]);
    expect(memberChangeLines(was, was, { permissions: false })).toEqual([]);
  });

  it('names each invitation the change revoked, with why', () => {
    expect(
      invitationsRevokedLines([
        { id: 8, email: 'bob@acme.test', role: 'viewer', reason: 'inviter_suspended' },
      ]),
    ).toEqual([
      {
        action: 'invitation.revoked',
        target: 'invitation bob@acme.test',
        details: { invitation_id: 8, reason: 'inviter_suspended' },
      },
    ]);
  });
});

/**
 * An invitation lives no longer than its inviter's right to make it: removing or suspending the
 * member who invited revokes their pending invitations, and a demotion (a role or a lost
 * members.read) revokes those they could no longer make; in the transaction of the change, each
 * recorded in the audit log as `invitation.revoked` with the reason. An operator's invitation
 * (the CLI's, made by no member) is nobody's to lose.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createInvitation } from '../../commands/team/invitations.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';
import { heraldEnv, runHeraldJson } from '../support/processes.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';
const REVOKED_PAGE =
  'Invitation not valid This invitation link has already been used, was revoked or has expired. Ask the person who invited you for a new one.';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

type Role = 'owner' | 'admin' | 'developer' | 'viewer';

async function team() {
  const slug = `i-${randomBytes(5).toString('hex')}`;
  const { id } = await createWorkspace(server.deps, { name: `Team ${slug}`, slug }, TEST_OPERATOR);
  const add = async (role: Role, name: string = role) => {
    const email = `${name}@${slug}.test`;
    const { userId } = await addUser(
      server.deps,
      {
        workspace: slug,
        email,
        password: PASSWORD,
        role,
      },
      TEST_OPERATOR,
    );
    const browser = new ConsoleBrowser(server.app);
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
    /** Invites `invitee` from the Team page; the link shown once. */
    const invite = async (invitee: string, invitedRole: Role) => {
      await browser.get(`/console/w/${slug}/team`);
      const created = await browser.post(`/console/w/${slug}/team/invitations`, {
        email: invitee,
        role: invitedRole,
      });
      expect(created.status).toBe(201);
      const link = /<code id="invitation-link">([^<]+)<\/code>/.exec(created.body)?.[1] ?? '';
      return new URL(link).pathname;
    };
    /** A Team page form about `member`: remove, suspend, reactivate, or a new role. */
    const act = async (member: string, action: string, role?: Role) => {
      await browser.get(`/console/w/${slug}/team`);
      const done = await browser.post(`/console/w/${slug}/team/members`, {
        email: member,
        action,
        ...(role && { role }),
      });
      expect(done.status).toBe(303);
    };
    return { email, userId, browser, invite, act };
  };
  return { slug, id, add };
}

/** What the invitee sees at the link, and what posting the acceptance form gets. */
async function open(path: string) {
  const browser = new ConsoleBrowser(server.app);
  const page = await browser.get(path);
  return { status: page.status, text: visibleText(page.body) };
}

async function expectRevoked(path: string) {
  const browser = new ConsoleBrowser(server.app);
  const page = await browser.get(path);
  expect(page.status).toBe(404);
  expect(visibleText(page.body)).toContain(REVOKED_PAGE);
  // The form of a page opened before the revocation is refused the same way.
  await browser.get('/console/sign-in');
  const accepted = await browser.post(path, {
    password: 'a long password',
    password_confirmation: 'a long password',
  });
  expect(accepted.status).toBe(404);
  expect(visibleText(accepted.body)).toContain(REVOKED_PAGE);
}

const revocations = (workspaceId: number) =>
  server.sql`
    select actor, source, action, target, details from audit_log
    where workspace_id = ${workspaceId} and action = 'invitation.revoked' order by id`;

const invitationId = async (workspaceId: number, email: string) => {
  const [row] = await server.sql<{ id: number }[]>`
    select id from invitations where workspace_id = ${workspaceId} and email = ${email}`;
  return (row as { id: number }).id;
};

describe("an inviter's pending invitations", () => {
  it('a removed admin cannot rejoin as admin through an invitation they made before', async () => {
    const { slug, id, add } = await team();
    const owner = await add('owner');
    const admin = await add('admin');
    const spare = `spare-${randomBytes(3).toString('hex')}@example.test`;
    const link = await admin.invite(spare, 'admin');
    expect((await open(link)).status).toBe(200);
    await owner.act(admin.email, 'remove');
    await expectRevoked(link);
    expect(await revocations(id)).toEqual([
      {
        actor: owner.email,
        source: 'console',
        action: 'invitation.revoked',
        target: `invitation ${spare}`,
        details: { invitation_id: await invitationId(id, spare), reason: 'inviter_removed' },
      },
    ]);
    const listed = await owner.browser.get(`/console/w/${slug}/team`);
    expect(visibleText(listed.body)).toContain(`${spare} admin revoked`);
  });

  it('suspending the inviter revokes them; reactivating revives none', async () => {
    const { id, add } = await team();
    const owner = await add('owner');
    const admin = await add('admin');
    const invitee = `new-${randomBytes(3).toString('hex')}@example.test`;
    const link = await admin.invite(invitee, 'developer');
    await owner.act(admin.email, 'suspend');
    await expectRevoked(link);
    await owner.act(admin.email, 'reactivate');
    await expectRevoked(link);
    expect(await revocations(id)).toEqual([
      expect.objectContaining({
        target: `invitation ${invitee}`,
        details: { invitation_id: await invitationId(id, invitee), reason: 'inviter_suspended' },
      }),
    ]);
  });

  it('an owner demoted to admin loses the owner invitations they made and keeps the others', async () => {
    const { id, add } = await team();
    const owner = await add('owner');
    const other = await add('owner', 'other-owner');
    const boss = `boss-${randomBytes(3).toString('hex')}@example.test`;
    const helper = `helper-${randomBytes(3).toString('hex')}@example.test`;
    const ownerLink = await other.invite(boss, 'owner');
    const adminLink = await other.invite(helper, 'admin');
    await owner.act(other.email, 'role', 'admin');
    await expectRevoked(ownerLink);
    expect((await open(adminLink)).status).toBe(200);
    expect(await revocations(id)).toEqual([
      expect.objectContaining({
        target: `invitation ${boss}`,
        details: { invitation_id: await invitationId(id, boss), reason: 'inviter_demoted' },
      }),
    ]);
  });

  it('an admin made developer, or losing members.read, loses every pending invitation', async () => {
    const { slug, id, add } = await team();
    const owner = await add('owner');
    const first = await add('admin', 'first');
    const second = await add('admin', 'second');
    const firstLink = await first.invite(
      `a-${randomBytes(3).toString('hex')}@example.test`,
      'viewer',
    );
    const secondLink = await second.invite(
      `b-${randomBytes(3).toString('hex')}@example.test`,
      'viewer',
    );
    await owner.act(first.email, 'role', 'developer');
    await expectRevoked(firstLink);
    expect((await open(secondLink)).status).toBe(200);
    const permissions = `/console/w/${slug}/team/members/${second.userId}/permissions`;
    await owner.browser.get(permissions);
    const revoked = await owner.browser.post(permissions, {
      permission: 'members.read',
      change: 'revoke',
    });
    expect(revoked.status).toBe(303);
    await expectRevoked(secondLink);
    expect((await revocations(id)).map((entry) => entry.details.reason)).toEqual([
      'inviter_demoted',
      'inviter_demoted',
    ]);
  });

  it("leaves an operator's invitation and other members' invitations alone", async () => {
    const { slug, add } = await team();
    const owner = await add('owner');
    const leaving = await add('admin', 'leaving');
    const staying = await add('admin', 'staying');
    const { token } = await createInvitation(
      server.deps,
      {
        workspace: slug,
        email: `op-${randomBytes(3).toString('hex')}@example.test`,
      },
      TEST_OPERATOR,
    );
    const stayingLink = await staying.invite(
      `s-${randomBytes(3).toString('hex')}@example.test`,
      'viewer',
    );
    await leaving.invite(`l-${randomBytes(3).toString('hex')}@example.test`, 'viewer');
    await owner.act(leaving.email, 'remove');
    expect((await open(`/console/invitations/${token}`)).status).toBe(200);
    expect((await open(stayingLink)).status).toBe(200);
  });

  it('refuses an invitation from a member who no longer manages the team', async () => {
    const { slug, add } = await team();
    await add('owner');
    const developer = await add('developer');
    const admin = await add('admin');
    const email = `late-${randomBytes(3).toString('hex')}@example.test`;
    await expect(
      createInvitation(
        server.deps,
        { workspace: slug, email, by: { userId: developer.userId } },
        TEST_OPERATOR,
      ),
    ).rejects.toMatchObject({
      code: 'forbidden',
      message: `You no longer manage the members of ${slug}.`,
    });
    await expect(
      createInvitation(
        server.deps,
        {
          workspace: slug,
          email,
          role: 'owner',
          by: { userId: admin.userId },
        },
        TEST_OPERATOR,
      ),
    ).rejects.toMatchObject({ code: 'forbidden', message: 'Only an owner can invite an owner.' });
  });

  it('the CLI records what a member update revoked, as the console does', async () => {
    const { slug, id, add } = await team();
    await add('owner');
    const admin = await add('admin');
    const invitee = `cli-${randomBytes(3).toString('hex')}@example.test`;
    const link = await admin.invite(invitee, 'developer');
    const env = heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });
    const run = await runHeraldJson(
      ['member', 'update', '--workspace', slug, '--email', admin.email, '--status', 'suspended'],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    await expectRevoked(link);
    expect(await revocations(id)).toEqual([
      {
        actor: userInfo().username,
        source: 'cli',
        action: 'invitation.revoked',
        target: `invitation ${invitee}`,
        details: { invitation_id: await invitationId(id, invitee), reason: 'inviter_suspended' },
      },
    ]);
  });

  it('the upgrade names the inviters of earlier console invitations and revokes the stale ones', async () => {
    const { id, add } = await team();
    const owner = await add('owner');
    const leaving = await add('admin', 'leaving');
    const staying = await add('admin', 'staying');
    const left = `left-${randomBytes(3).toString('hex')}@example.test`;
    const kept = `kept-${randomBytes(3).toString('hex')}@example.test`;
    const leftLink = await leaving.invite(left, 'admin');
    const keptLink = await staying.invite(kept, 'viewer');
    // As invitations were stored before they recorded their inviter, and removals left them be.
    await server.sql`update invitations set invited_by = null where workspace_id = ${id}`;
    await owner.act(leaving.email, 'remove');
    expect((await open(leftLink)).status).toBe(200);

    const migration = new URL('../../db/migrations/0022_invitation_inviters.sql', import.meta.url);
    await server.sql.unsafe(await readFile(migration, 'utf8'));
    await expectRevoked(leftLink);
    expect((await open(keptLink)).status).toBe(200);
    const [keptRow] = await server.sql<{ invitedBy: number }[]>`
      select invited_by from invitations where id = ${await invitationId(id, kept)}`;
    expect(keptRow?.invitedBy).toBe(staying.userId);
    expect(await revocations(id)).toEqual([
      {
        actor: 'herald migrate',
        source: 'cli',
        action: 'invitation.revoked',
        target: `invitation ${left}`,
        details: { invitation_id: await invitationId(id, left), reason: 'inviter_removed' },
      },
    ]);
  });
});

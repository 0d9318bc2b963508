/**
 * Team in the console: invitations (link shown once, revoke, only an owner invites an owner),
 * members (role, suspend, remove), the last owner protected, and other workspaces' records and
 * members without members.read refused; each member's permissions granted and revoked one at a
 * time (applied on the member's next request, audited), with the owner's, one's own and what one
 * does not hold refused, and the last owner holding members.read kept.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvitation } from '../../commands/team/invitations.js';
import {
  listWorkspaceMembers,
  removeWorkspaceMember,
  updateWorkspaceMember,
} from '../../commands/team/members.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { insertCampaign } from '../../db/campaigns.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, type Page, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function team() {
  const slug = `m-${randomBytes(5).toString('hex')}`;
  const { id } = await createWorkspace(server.deps, { name: `Team ${slug}`, slug }, TEST_OPERATOR);
  const add = async (role: 'owner' | 'admin' | 'developer' | 'viewer', name: string = role) => {
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
    await browser.get(`/console/w/${slug}/team`);
    return { email, userId, browser };
  };
  return { slug, id, add };
}

const memberRow = async (slug: string, email: string) => {
  const [row] = await server.sql<{ role: string; status: string }[]>`
    select m.role, m.status from workspace_members m join users u on u.id = m.user_id
    join workspaces w on w.id = m.workspace_id where w.slug = ${slug} and u.email = ${email}`;
  return row;
};

describe('Team', () => {
  it('an owner invites: the link is shown once and opens the acceptance page', async () => {
    const { slug, add } = await team();
    const owner = await add('owner');
    const created = await owner.browser.post(`/console/w/${slug}/team/invitations`, {
      email: 'new.person@example.test',
      role: 'developer',
    });
    expect(created.status).toBe(201);
    const link = /<code id="invitation-link">([^<]+)<\/code>/.exec(created.body)?.[1] ?? '';
    expect(link).toMatch(/^http:\/\/herald\.test\/console\/invitations\/hli_[A-Za-z0-9_-]{43}$/);
    const opened = await new ConsoleBrowser(server.app).get(new URL(link).pathname);
    expect(opened.status).toBe(200);
    const listed = await owner.browser.get(`/console/w/${slug}/team`);
    expect(listed.body).not.toContain(link);
    expect(visibleText(listed.body)).toContain('new.person@example.test developer pending');
    const again = await owner.browser.post(`/console/w/${slug}/team/invitations`, {
      email: 'new.person@example.test',
      role: 'developer',
    });
    expect(again.status).toBe(409);
  });

  it('the invite form shows every refusal at once, each under its own field', async () => {
    const { slug, add } = await team();
    const owner = await add('owner');
    const refused = await owner.browser.post(`/console/w/${slug}/team/invitations`, {
      email: 'not-an-address',
      role: 'emperor',
    });
    expect(refused.status).toBe(422);
    // A field's block (one line of the form): its label, its input and its error.
    const fieldOf = (id: string) =>
      new RegExp(`<div class="field( invalid)?"><label for="${id}">[\\s\\S]*?</div>\\n`).exec(
        refused.body,
      )?.[0] ?? '';
    const email = fieldOf('invite-email');
    expect(email).toContain('class="field invalid"');
    expect(email).toContain('value="not-an-address"');
    expect(visibleText(email)).toContain('Email "not-an-address" is not an email address');
    expect(visibleText(email)).not.toContain('Role must be');
    const role = fieldOf('invite-role');
    expect(role).toContain('class="field invalid"');
    expect(visibleText(role)).toContain('Role must be one of owner, admin, developer, viewer');
    expect(visibleText(role)).not.toContain('not an email address');
    expect(refused.body).not.toContain('class="alert error"');
    const [stored] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from invitations i join workspaces w on w.id = i.workspace_id
      where w.slug = ${slug}`;
    expect(stored?.count).toBe(0);
  });

  it('an admin cannot invite or make an owner', async () => {
    const { slug, add } = await team();
    await add('owner');
    const admin = await add('admin');
    const invite = await admin.browser.post(`/console/w/${slug}/team/invitations`, {
      email: 'boss@example.test',
      role: 'owner',
    });
    expect(invite.status).toBe(403);
    expect(visibleText(invite.body)).toContain('Only an owner can invite an owner.');
    const developer = await add('developer');
    await admin.browser.get(`/console/w/${slug}/team`);
    const promote = await admin.browser.post(`/console/w/${slug}/team/members`, {
      email: developer.email,
      action: 'role',
      role: 'owner',
    });
    expect(promote.status).toBe(403);
    expect((await memberRow(slug, developer.email))?.role).toBe('developer');
  });

  it('changes a role, suspends (the member is refused at once) and removes', async () => {
    const { slug, add } = await team();
    const owner = await add('owner');
    const developer = await add('developer');
    await owner.browser.get(`/console/w/${slug}/team`);
    const changed = await owner.browser.post(`/console/w/${slug}/team/members`, {
      email: developer.email,
      action: 'role',
      role: 'admin',
    });
    expect(changed.status).toBe(303);
    expect(await memberRow(slug, developer.email)).toEqual({ role: 'admin', status: 'active' });
    await owner.browser.get(`/console/w/${slug}/team`);
    await owner.browser.post(`/console/w/${slug}/team/members`, {
      email: developer.email,
      action: 'suspend',
    });
    expect((await memberRow(slug, developer.email))?.status).toBe('suspended');
    expect((await developer.browser.get(`/console/w/${slug}`)).status).toBe(403);
    await owner.browser.get(`/console/w/${slug}/team`);
    const removed = await owner.browser.post(`/console/w/${slug}/team/members`, {
      email: developer.email,
      action: 'remove',
    });
    expect(removed.status).toBe(303);
    expect(await memberRow(slug, developer.email)).toBeUndefined();
  });

  it('protects the last owner', async () => {
    const { slug, add } = await team();
    const owner = await add('owner');
    const demoted = await owner.browser.post(`/console/w/${slug}/team/members`, {
      email: owner.email,
      action: 'role',
      role: 'admin',
    });
    expect(demoted.status).toBe(409);
    expect(visibleText(demoted.body)).toContain(
      `${owner.email} is the only active owner of ${slug}`,
    );
    expect((await memberRow(slug, owner.email))?.role).toBe('owner');
  });

  it("refuses another workspace's invitation and a member without members.read", async () => {
    const mine = await team();
    const owner = await mine.add('owner');
    const theirs = await team();
    await theirs.add('owner');
    const { id } = await createInvitation(
      server.deps,
      {
        workspace: theirs.slug,
        email: 'x@example.test',
      },
      TEST_OPERATOR,
    );
    const refused = await owner.browser.post(
      `/console/w/${mine.slug}/team/invitations/${id}/revoke`,
      {},
    );
    expect(refused.status).toBe(404);
    const [row] = await server.sql<{ revoked: boolean }[]>`
      select revoked_at is not null as revoked from invitations where id = ${id}`;
    expect(row?.revoked).toBe(false);
    const viewer = await mine.add('viewer');
    expect((await viewer.browser.get(`/console/w/${mine.slug}/team`)).status).toBe(403);
  });
});

const permissionsOf = async (slug: string, email: string) => {
  const [row] = await server.sql<{ permissions: string[] }[]>`
    select m.permissions from workspace_members m join users u on u.id = m.user_id
    join workspaces w on w.id = m.workspace_id where w.slug = ${slug} and u.email = ${email}`;
  return row?.permissions;
};

/** The console's audit entries of permission changes in the workspace, oldest first. */
const permissionEntries = (workspaceId: number) =>
  server.sql`
    select actor, source, action, target, details from audit_log
    where workspace_id = ${workspaceId} and action like 'member.permission_%' order by id`;

/** Grants or revokes one permission of a member from their permissions page, as its form does. */
async function change(
  browser: ConsoleBrowser,
  slug: string,
  userId: number,
  permission: string,
  how: 'grant' | 'revoke',
): Promise<Page> {
  const url = `/console/w/${slug}/team/members/${userId}/permissions`;
  await browser.get(url);
  return browser.post(url, { permission, change: how });
}

describe('Team: a member’s permissions', () => {
  it('an owner grants recipients.read to a developer: their next batch report shows full numbers; revoked, masked again', async () => {
    const { slug, id, add } = await team();
    const owner = await add('owner');
    const developer = await add('developer');
    const recipients = Array.from(
      { length: 3 },
      (_, index) => `+61495${index}${String(randomInt(100_000)).padStart(5, '0')}`,
    );
    const { id: batchId } = await insertCampaign(server.sql, {
      workspaceId: id,
      apiKeyId: null,
      source: 'quick_send',
      name: null,
      reference: null,
      purpose: 'transactional',
      body: 'Permission check',
      senderId: null,
      routingType: 'direct',
      providerSlug: 'own',
      failoverRouteSlug: null,
      recipients,
    });
    const report = `/console/w/${slug}/batches/${batchId}`;
    const masked = (page: Page) => {
      for (const number of recipients) {
        expect(page.body).not.toContain(number);
        expect(page.body).toContain(`•••• ${number.slice(-4)}`);
      }
    };
    masked(await developer.browser.get(report));

    const teamPage = await owner.browser.get(`/console/w/${slug}/team`);
    expect(teamPage.body).toContain(`/team/members/${developer.userId}/permissions`);
    const editor = await owner.browser.get(
      `/console/w/${slug}/team/members/${developer.userId}/permissions`,
    );
    expect(editor.status).toBe(200);
    const row = (page: Page, permission: string) =>
      visibleText(
        new RegExp(`<tr data-permission="${permission}">[\\s\\S]*?</tr>`).exec(page.body)?.[0] ??
          '',
      );
    expect(row(editor, 'recipients.read')).toBe(
      'recipients.read Recipient numbers in full on batch reports; without it, only their last four digits. Not granted Grant',
    );
    expect(row(editor, 'campaigns.read')).toBe(
      'campaigns.read Campaigns, batch reports and Quick Send; the campaign and Quick Send MCP tools. Granted role default Revoke',
    );

    const granted = await change(owner.browser, slug, developer.userId, 'recipients.read', 'grant');
    expect(granted.status).toBe(303);
    expect(granted.location).toBe(
      `/console/w/${slug}/team/members/${developer.userId}/permissions?done=granted&permission=recipients.read`,
    );
    const after = await owner.browser.get(granted.location as string);
    expect(visibleText(after.body)).toContain(
      `recipients.read was granted to ${developer.email}; it applies from their next request.`,
    );
    expect(await permissionsOf(slug, developer.email)).toEqual([
      'developer_tools.read',
      'campaigns.read',
      'messages.read',
      'reports.read',
      'recipients.read',
    ]);
    // The developer's session is the same one: the next request reads the new permission.
    const full = await developer.browser.get(report);
    for (const number of recipients) expect(full.body).toContain(number);

    const revoked = await change(
      owner.browser,
      slug,
      developer.userId,
      'recipients.read',
      'revoke',
    );
    expect(revoked.status).toBe(303);
    expect(await permissionsOf(slug, developer.email)).toEqual([
      'developer_tools.read',
      'campaigns.read',
      'messages.read',
      'reports.read',
    ]);
    masked(await developer.browser.get(report));

    // Granting what is held already changes nothing and records nothing.
    expect(
      (await change(owner.browser, slug, developer.userId, 'campaigns.read', 'grant')).status,
    ).toBe(303);
    const base = { actor: owner.email, source: 'console', target: `member ${developer.email}` };
    expect(await permissionEntries(id)).toEqual([
      {
        ...base,
        action: 'member.permission_granted',
        details: {
          permission: 'recipients.read',
          permissions:
            'developer_tools.read,campaigns.read,messages.read,reports.read,recipients.read',
        },
      },
      {
        ...base,
        action: 'member.permission_revoked',
        details: {
          permission: 'recipients.read',
          permissions: 'developer_tools.read,campaigns.read,messages.read,reports.read',
        },
      },
    ]);
  });

  it("refuses an admin an owner's permissions, their own, and a grant of what they do not hold", async () => {
    const { slug, id, add } = await team();
    const owner = await add('owner');
    const admin = await add('admin');
    const developer = await add('developer');

    const teamPage = await admin.browser.get(`/console/w/${slug}/team`);
    expect(teamPage.body).not.toContain(`/team/members/${owner.userId}/permissions`);
    expect(teamPage.body).not.toContain(`/team/members/${admin.userId}/permissions`);
    expect(teamPage.body).toContain(`/team/members/${developer.userId}/permissions`);

    const ownerBefore = await permissionsOf(slug, owner.email);
    const onOwner = await change(admin.browser, slug, owner.userId, 'recipients.read', 'revoke');
    expect(onOwner.status).toBe(403);
    expect(visibleText(onOwner.body)).toContain("Only an owner can change an owner's permissions.");
    expect(onOwner.body).not.toContain('value="revoke"');
    expect(await permissionsOf(slug, owner.email)).toEqual(ownerBefore);

    // The owner narrows the admin, who may then neither give it back to themselves nor to others.
    expect(
      (await change(owner.browser, slug, admin.userId, 'recipients.read', 'revoke')).status,
    ).toBe(303);
    const onSelf = await change(admin.browser, slug, admin.userId, 'recipients.read', 'grant');
    expect(onSelf.status).toBe(403);
    expect(visibleText(onSelf.body)).toContain(
      'Only an owner can change your own permissions; ask an owner of the workspace.',
    );
    const notHeld = await change(admin.browser, slug, developer.userId, 'recipients.read', 'grant');
    expect(notHeld.status).toBe(403);
    expect(visibleText(notHeld.body)).toContain(
      'You can grant only permissions you hold yourself, and you do not hold recipients.read.',
    );
    expect(await permissionsOf(slug, admin.email)).not.toContain('recipients.read');
    expect(await permissionsOf(slug, developer.email)).not.toContain('recipients.read');

    // An admin still changes a developer's, and an unknown permission is answered on the page.
    expect(
      (await change(admin.browser, slug, developer.userId, 'members.read', 'grant')).status,
    ).toBe(303);
    expect(await permissionsOf(slug, developer.email)).toContain('members.read');
    const unknown = await change(admin.browser, slug, developer.userId, 'billing.write', 'grant');
    expect(unknown.status).toBe(422);
    expect(visibleText(unknown.body)).toContain(
      'Choose one of the permissions listed, to grant or to revoke.',
    );
    expect((await permissionEntries(id)).map((entry) => entry.action)).toEqual([
      'member.permission_revoked',
      'member.permission_granted',
    ]);
  });

  it('refuses a viewer (403), a request without the CSRF token, and another workspace’s member (404)', async () => {
    const { slug, add } = await team();
    await add('owner');
    const developer = await add('developer');
    const viewer = await add('viewer');
    const url = `/console/w/${slug}/team/members/${developer.userId}/permissions`;
    const page = await viewer.browser.get(url);
    expect(page.status).toBe(403);
    const byViewer = await viewer.browser.post(url, {
      permission: 'members.read',
      change: 'grant',
    });
    expect(byViewer.status).toBe(403);
    expect(visibleText(byViewer.body)).toContain(
      'This needs the members.read permission and the owner or admin role in this workspace.',
    );
    expect(await permissionsOf(slug, developer.email)).not.toContain('members.read');

    const other = await team();
    const otherOwner = await other.add('owner');
    await otherOwner.browser.get(`/console/w/${other.slug}/team`);
    const withoutToken = await otherOwner.browser.post(
      `/console/w/${other.slug}/team/members/${otherOwner.userId}/permissions`,
      { _csrf: null, permission: 'recipients.read', change: 'revoke' },
    );
    expect(withoutToken.status).toBe(403);
    expect(visibleText(withoutToken.body)).toContain('Request refused');
    expect(await permissionsOf(other.slug, otherOwner.email)).toContain('recipients.read');
    const foreign = await otherOwner.browser.post(
      `/console/w/${other.slug}/team/members/${developer.userId}/permissions`,
      { permission: 'members.read', change: 'grant' },
    );
    expect(foreign.status).toBe(404);
    expect(visibleText(foreign.body)).toContain('This workspace has no such member.');
    expect(await permissionsOf(slug, developer.email)).not.toContain('members.read');
  });

  it('keeps the last owner holding members.read, so the team can always be managed', async () => {
    const { slug, add } = await team();
    const first = await add('owner', 'first');
    const alone = await change(first.browser, slug, first.userId, 'members.read', 'revoke');
    expect(alone.status).toBe(409);
    expect(visibleText(alone.body)).toContain(
      `${first.email} is the only active owner of ${slug} with members.read, which managing the team needs; grant it to another owner first`,
    );
    expect(await permissionsOf(slug, first.email)).toContain('members.read');
    // An owner's own other permissions are theirs to narrow.
    expect(
      (await change(first.browser, slug, first.userId, 'recipients.read', 'revoke')).status,
    ).toBe(303);

    const second = await add('owner', 'second');
    expect(
      (await change(second.browser, slug, first.userId, 'members.read', 'revoke')).status,
    ).toBe(303);
    expect((await first.browser.get(`/console/w/${slug}/team`)).status).toBe(403);
    const last = await change(second.browser, slug, second.userId, 'members.read', 'revoke');
    expect(last.status).toBe(409);
    expect(visibleText(last.body)).toContain(
      `${second.email} is the only active owner of ${slug} with members.read, which managing the team needs; grant it to another owner first`,
    );
    expect(await permissionsOf(slug, second.email)).toContain('members.read');
    // The same use-case keeps them for the CLI: neither demoted nor removed.
    const refusal = `${second.email} is the only active owner of ${slug} with members.read, which managing the team needs; grant it to another owner first`;
    await expect(
      updateWorkspaceMember(
        server.deps,
        { workspace: slug, email: second.email, role: 'admin' },
        TEST_OPERATOR,
      ),
    ).rejects.toThrow(refusal);
    await expect(
      removeWorkspaceMember(server.deps, { workspace: slug, email: second.email }, TEST_OPERATOR),
    ).rejects.toThrow(refusal);
    expect(await memberRow(slug, second.email)).toEqual({ role: 'owner', status: 'active' });
  });

  it('checks who acts on whom on the memberships as locked for the change, not as read before', async () => {
    const { slug, add } = await team();
    const owner = await add('owner');
    const admin = await add('admin');
    const target = await add('developer', 'target');
    const by = { userId: admin.userId };
    // What the admin's page read: a developer, whose permissions the admin may change...
    const { members } = await listWorkspaceMembers(server.deps, { workspace: slug });
    expect(members.find((member) => member.email === target.email)?.role).toBe('developer');
    // ...who an owner makes owner before the admin's change arrives.
    await updateWorkspaceMember(
      server.deps,
      {
        workspace: slug,
        email: target.email,
        role: 'owner',
        by: { userId: owner.userId },
      },
      TEST_OPERATOR,
    );
    const before = await permissionsOf(slug, target.email);
    await expect(
      updateWorkspaceMember(
        server.deps,
        {
          workspace: slug,
          email: target.email,
          revoke: ['recipients.read'],
          by,
        },
        TEST_OPERATOR,
      ),
    ).rejects.toThrow("Only an owner can change an owner's permissions.");
    for (const change of [{ role: 'developer' }, { status: 'suspended' }]) {
      await expect(
        updateWorkspaceMember(
          server.deps,
          { workspace: slug, email: target.email, ...change, by },
          TEST_OPERATOR,
        ),
      ).rejects.toThrow('Only an owner can change an owner, or make one.');
    }
    await expect(
      removeWorkspaceMember(
        server.deps,
        { workspace: slug, email: target.email, by },
        TEST_OPERATOR,
      ),
    ).rejects.toThrow('Only an owner can change an owner, or make one.');
    expect(await memberRow(slug, target.email)).toEqual({ role: 'owner', status: 'active' });
    expect(await permissionsOf(slug, target.email)).toEqual(before);

    // The acting member's own role is read there too: an admin demoted meanwhile acts no more.
    const developer = await add('developer');
    await updateWorkspaceMember(
      server.deps,
      {
        workspace: slug,
        email: admin.email,
        role: 'developer',
      },
      TEST_OPERATOR,
    );
    await expect(
      updateWorkspaceMember(
        server.deps,
        {
          workspace: slug,
          email: developer.email,
          grant: ['members.read'],
          by,
        },
        TEST_OPERATOR,
      ),
    ).rejects.toThrow(`You no longer manage the members of ${slug}.`);
    expect(await permissionsOf(slug, developer.email)).not.toContain('members.read');
  });

  it('counts what a new role brings as granted: a narrowed admin cannot take it back by a role', async () => {
    const { slug, add } = await team();
    const owner = await add('owner');
    const admin = await add('admin');
    const developer = await add('developer');
    expect(
      (await change(owner.browser, slug, admin.userId, 'recipients.read', 'revoke')).status,
    ).toBe(303);
    for (const email of [admin.email, developer.email]) {
      await admin.browser.get(`/console/w/${slug}/team`);
      const promoted = await admin.browser.post(`/console/w/${slug}/team/members`, {
        email,
        action: 'role',
        role: 'admin',
      });
      expect(promoted.status).toBe(403);
      expect(visibleText(promoted.body)).toContain(
        'You can grant only permissions you hold yourself, and you do not hold recipients.read.',
      );
      expect(await permissionsOf(slug, email)).not.toContain('recipients.read');
    }
    expect((await memberRow(slug, developer.email))?.role).toBe('developer');
  });
});

/**
 * Team in the console: invitations (link shown once, revoke, only an owner invites an owner),
 * members (role, suspend, remove), the last owner protected, and other workspaces' records and
 * members without members.read refused.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvitation } from '../../commands/invitations.js';
import { addUser } from '../../commands/users.js';
import { createWorkspace } from '../../commands/workspaces.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function team() {
  const slug = `m-${randomBytes(5).toString('hex')}`;
  await createWorkspace(server.deps, { name: `Team ${slug}`, slug });
  const add = async (role: 'owner' | 'admin' | 'developer' | 'viewer') => {
    const email = `${role}@${slug}.test`;
    await addUser(server.deps, { workspace: slug, email, password: PASSWORD, role });
    const browser = new ConsoleBrowser(server.app);
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
    await browser.get(`/console/w/${slug}/team`);
    return { email, browser };
  };
  return { slug, add };
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
    const { id } = await createInvitation(server.deps, {
      workspace: theirs.slug,
      email: 'x@example.test',
    });
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

/**
 * The lines the use-cases write, as the Audit page shows them: a console member's with their
 * user id, the browser's address and user agent; signing in, switching workspace and signing out;
 * accepting an invitation, by the person who joins, in the workspace they join; an owner making a
 * second factor optional.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvitation } from '../../commands/team/invitations.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';
/** What light-my-request sends as the browser's user agent. */
const USER_AGENT = 'lightMyRequest';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function workspace() {
  const slug = `l-${randomBytes(5).toString('hex')}`;
  const { id } = await createWorkspace(server.deps, { name: `Lines ${slug}`, slug }, TEST_OPERATOR);
  return { slug, id };
}

const linesOf = (email: string) =>
  server.sql`
    select a.workspace_id, a.user_id = u.id as by_user, a.actor, a.source, a.action, a.target,
           a.details, host(a.address) as address, a.user_agent, a.origin
    from audit_log a join users u on lower(u.email) = lower(${email})
    where a.actor = ${email} order by a.id`;

describe('audit lines of console members', () => {
  it('records signing in, switching workspace, a setting and signing out, from the browser', async () => {
    const [first, second] = [await workspace(), await workspace()];
    const email = `owner@${first.slug}.test`;
    for (const { slug } of [first, second])
      await addUser(
        server.deps,
        { workspace: slug, email, password: PASSWORD, role: 'owner' },
        TEST_OPERATOR,
      );
    const browser = new ConsoleBrowser(server.app);
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
    const visitor = (await linesOf(email))[0]?.workspaceId;
    const [signedInTo, other] = visitor === first.id ? [first, second] : [second, first];
    await browser.get('/console/workspaces');
    expect((await browser.post('/console/workspaces', { workspace: other.slug })).status).toBe(303);
    await browser.get('/console/profile');
    const optional = await browser.post(`/console/w/${other.slug}/security/second-factor`, {
      required: 'false',
    });
    expect(optional.status).toBe(303);
    await browser.get('/console/profile');
    expect((await browser.post('/console/sign-out', {})).status).toBe(303);

    const fromBrowser = {
      byUser: true,
      actor: email,
      source: 'console',
      address: browser.address,
      userAgent: USER_AGENT,
      origin: null,
    };
    expect(await linesOf(email)).toEqual([
      {
        ...fromBrowser,
        workspaceId: signedInTo.id,
        action: 'session.signed_in',
        target: null,
        details: {},
      },
      {
        ...fromBrowser,
        workspaceId: other.id,
        action: 'session.switched_workspace',
        target: `workspace ${other.slug}`,
        details: { from: signedInTo.slug },
      },
      {
        ...fromBrowser,
        workspaceId: other.id,
        action: 'workspace.second_factor_optional',
        target: `workspace ${other.slug}`,
        details: {},
      },
      {
        ...fromBrowser,
        workspaceId: other.id,
        action: 'session.signed_out',
        target: null,
        details: {},
      },
    ]);
  });

  it('records an invitation accepted by the person who joins, and the Audit page shows it', async () => {
    const team = await workspace();
    const owner = `owner@${team.slug}.test`;
    await addUser(
      server.deps,
      { workspace: team.slug, email: owner, password: PASSWORD, role: 'owner' },
      TEST_OPERATOR,
    );
    const email = `new@${team.slug}.test`;
    const { id, token } = await createInvitation(
      server.deps,
      { workspace: team.slug, email, role: 'developer' },
      TEST_OPERATOR,
    );
    const browser = new ConsoleBrowser(server.app);
    await browser.get(`/console/invitations/${token}`);
    const accepted = await browser.post(`/console/invitations/${token}`, {
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(accepted.status).toBe(303);
    expect(await linesOf(email)).toEqual([
      {
        workspaceId: team.id,
        byUser: true,
        actor: email,
        source: 'console',
        action: 'invitation.accepted',
        target: `member ${email}`,
        details: { role: 'developer', invitation_id: id },
        address: browser.address,
        userAgent: USER_AGENT,
        origin: null,
      },
    ]);
    expect(JSON.stringify(await linesOf(email))).not.toContain(PASSWORD);

    const ownerBrowser = new ConsoleBrowser(server.app);
    expect((await ownerBrowser.signIn(owner, PASSWORD)).status).toBe(303);
    const page = visibleText((await ownerBrowser.get(`/console/w/${team.slug}/audit`)).body);
    // Postgres keeps jsonb keys shortest first.
    expect(page).toContain(
      `${email} invitation.accepted member ${email} role: developer · invitation_id: ${id} ${browser.address}`,
    );
  });
});

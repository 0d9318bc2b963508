/**
 * A user's signed-in browsers on their profile: listed (created, last seen, address, browser, this
 * session), one signed out or every other one, each refused at its very next request; another
 * user's session is not theirs to end; and daily maintenance deleting sessions a day after they
 * ended while live ones stay.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMaintenanceActivities } from '../../activities/maintenance.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function account() {
  const slug = `s-${randomBytes(5).toString('hex')}`;
  await createWorkspace(server.deps, { name: `Sessions ${slug}`, slug }, TEST_OPERATOR);
  const email = `owner@${slug}.test`;
  await addUser(
    server.deps,
    { workspace: slug, email, password: PASSWORD, role: 'owner' },
    TEST_OPERATOR,
  );
  return { slug, email };
}

async function signedIn(email: string): Promise<ConsoleBrowser> {
  const browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return browser;
}

/** The ids of the sessions the profile offers to sign out, in the page's order. */
const endable = (html: string) =>
  [...html.matchAll(/action="\/console\/profile\/sessions\/(\d+)\/end"/g)].map(([, id]) =>
    Number(id),
  );

const sessionIdOf = async (browser: ConsoleBrowser) => {
  const token = browser.cookies.get('herald_session') ?? '';
  const [row] = await server.sql<{ id: number }[]>`
    select id from console_sessions
    where token_hash = ${createHash('sha256').update(token).digest()}`;
  return row?.id;
};

async function auditOf(email: string) {
  return server.sql<{ action: string; target: string | null; details: object; address: string }[]>`
    select action, target, details, host(address) as address from audit_log
    where actor = ${email} and source = 'console' and action like 'session.%'
      and action <> 'session.signed_in'
    order by id`;
}

describe('signed-in browsers on the profile', () => {
  it('lists each live session with its address, browser and times, marking this one', async () => {
    const { email, slug } = await account();
    const here = await signedIn(email);
    const there = await signedIn(email);
    const page = await here.get('/console/profile');
    expect(page.status).toBe(200);
    const text = visibleText(page.body);
    expect(text).toContain('Signed-in browsers');
    expect(text).toContain(here.address);
    expect(text).toContain(there.address);
    expect(text.match(/lightMyRequest/g)).toHaveLength(2);
    expect(text.match(/This session/g)).toHaveLength(1);
    expect(text).toContain(`Sessions ${slug}`);
    expect(text).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    // Only the other browser has a sign-out button; this one signs out with "Sign out".
    expect(endable(page.body)).toEqual([await sessionIdOf(there)]);
  });

  it('signs one browser out: its next request is refused at once, this one carries on', async () => {
    const { email, slug } = await account();
    const here = await signedIn(email);
    const there = await signedIn(email);
    expect((await there.get(`/console/w/${slug}`)).status).toBe(200);
    const [otherId] = endable((await here.get('/console/profile')).body);
    const ended = await here.post(`/console/profile/sessions/${otherId}/end`, {});
    expect(ended.status).toBe(303);
    expect(ended.location).toBe('/console/profile?done=session_ended');
    const refused = await there.get(`/console/w/${slug}`);
    expect(refused.status).toBe(303);
    expect(refused.location).toBe(
      `/console/sign-in?next=${encodeURIComponent(`/console/w/${slug}`)}`,
    );
    const page = await here.get('/console/profile?done=session_ended');
    expect(page.status).toBe(200);
    expect(visibleText(page.body)).toContain('That browser is signed out.');
    expect(endable(page.body)).toEqual([]);
    expect(await auditOf(email)).toEqual([
      {
        action: 'session.revoked',
        target: `session #${otherId}`,
        details: {},
        address: here.address,
      },
    ]);
  });

  it("refuses to end another user's session, which carries on", async () => {
    const mine = await account();
    const theirs = await account();
    const me = await signedIn(mine.email);
    const them = await signedIn(theirs.email);
    const theirId = await sessionIdOf(them);
    await me.get('/console/profile');
    const refused = await me.post(`/console/profile/sessions/${theirId}/end`, {});
    expect(refused.status).toBe(404);
    expect(visibleText(refused.body)).toContain(
      'This is not one of your signed-in sessions, or it has already ended',
    );
    expect((await them.get(`/console/w/${theirs.slug}`)).status).toBe(200);
    expect(await auditOf(mine.email)).toEqual([]);
    // Nor with a malformed id, nor without the page's CSRF token.
    expect((await me.post('/console/profile/sessions/nope/end', {})).status).toBe(404);
    expect(
      (await me.post(`/console/profile/sessions/${theirId}/end`, { _csrf: null })).status,
    ).toBe(403);
  });

  it('signs out everywhere else: every other browser is refused, this one stays', async () => {
    const { email, slug } = await account();
    const here = await signedIn(email);
    const others = [await signedIn(email), await signedIn(email)];
    await here.get('/console/profile');
    const done = await here.post('/console/profile/sessions/end-others', {});
    expect(done.status).toBe(303);
    expect(done.location).toBe('/console/profile?done=others_ended');
    for (const other of others) {
      const refused = await other.get(`/console/w/${slug}`);
      expect(refused.status).toBe(303);
      expect(refused.location).toMatch(/^\/console\/sign-in\?next=/);
    }
    expect((await here.get(`/console/w/${slug}`)).status).toBe(200);
    const page = await here.get('/console/profile?done=others_ended');
    expect(visibleText(page.body)).toContain(
      'Every other browser signed in to your account is signed out.',
    );
    expect(page.body).not.toContain('Sign out everywhere else');
    expect(await auditOf(email)).toEqual([
      {
        action: 'session.signed_out_elsewhere',
        target: null,
        details: { sessions_ended: 2 },
        address: here.address,
      },
    ]);
  });
});

describe('daily maintenance', () => {
  it('deletes sessions a day after they ended, and keeps live and recently ended ones', async () => {
    const { email } = await account();
    const [user] = await server.sql<{ id: number; workspaceId: number }[]>`
      select u.id, m.workspace_id from users u join workspace_members m on m.user_id = u.id
      where u.email = ${email}`;
    // Expiry from now, and how long ago it was revoked (null: never).
    const rows: Record<string, [string, string | null]> = {
      live: ['10 hours', null],
      'revoked an hour ago': ['10 hours', '1 hour'],
      'revoked two days ago': ['10 hours', '2 days'],
      'expired an hour ago': ['-1 hour', null],
      'expired two days ago': ['-2 days', null],
    };
    const ids: Record<string, number> = {};
    for (const [label, [expires, revoked]] of Object.entries(rows)) {
      const [row] = await server.sql<{ id: number }[]>`
        insert into console_sessions (token_hash, user_id, workspace_id, expires_at, revoked_at)
        values (${randomBytes(32)}, ${user?.id ?? 0}, ${user?.workspaceId ?? 0},
                now() + ${expires}::interval, now() - ${revoked}::interval)
        returning id`;
      ids[label] = row?.id as number;
    }
    const { purgeExpiredOAuthRecords } = createMaintenanceActivities({ sql: server.sql });
    // Small batches, as the workflow runs them: until one comes back short.
    while ((await purgeExpiredOAuthRecords({ batchSize: 2 })) >= 2) {}
    const left = await server.sql<{ id: number }[]>`
      select id from console_sessions where id = any(${Object.values(ids)}::bigint[])`;
    const labelOf = new Map(Object.entries(ids).map(([label, id]) => [id, label]));
    expect(left.map(({ id }) => labelOf.get(id)).sort()).toEqual([
      'expired an hour ago',
      'live',
      'revoked an hour ago',
    ]);
  });
});

/**
 * The console's accounts and guards, each negative case with its exact outcome: sign-in and its
 * throttle (the OAuth sign-in's limits), cookie attributes and security headers, CSRF refusals,
 * a session used on another workspace's pages, a viewer refused Developer Tools actions,
 * invitation acceptance (new account and existing account), sign-out, and CONSOLE_ENABLED=false.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvitation } from '../../commands/team/invitations.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

type App = Awaited<ReturnType<typeof openConsoleApp>>;
let server: App;

const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function workspaceWith(role: 'owner' | 'admin' | 'developer' | 'viewer' = 'owner') {
  const slug = `c-${randomBytes(5).toString('hex')}`;
  await createWorkspace(server.deps, { name: `Console ${slug}`, slug }, TEST_OPERATOR);
  const email = `${role}@${slug}.test`;
  await addUser(server.deps, { workspace: slug, email, password: PASSWORD, role }, TEST_OPERATOR);
  return { slug, email };
}

async function keyCount(slug: string): Promise<number> {
  const [row] = await server.sql<{ count: number }[]>`
    select count(*)::int as count from api_keys k join workspaces w on w.id = k.workspace_id
    where w.slug = ${slug}`;
  return row?.count ?? -1;
}

describe('console sign-in', () => {
  it('redirects / and an anonymous visit to the sign-in page', async () => {
    const root = await server.app.inject({ method: 'GET', url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/console');
    const browser = new ConsoleBrowser(server.app);
    const page = await browser.get('/console/w/anything/developer/api-keys');
    expect(page.status).toBe(303);
    expect(page.location).toBe(
      `/console/sign-in?next=${encodeURIComponent('/console/w/anything/developer/api-keys')}`,
    );
  });

  it('signs in with email and password into a session cookie that is HttpOnly, SameSite=Lax, not Secure on http', async () => {
    const { slug, email } = await workspaceWith('owner');
    const browser = new ConsoleBrowser(server.app);
    const signedIn = await browser.signIn(email, PASSWORD);
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(`/console/w/${slug}`);
    const cookie = String(signedIn.headers['set-cookie']);
    expect(cookie).toMatch(
      /herald_session=hcs_[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/console; HttpOnly; SameSite=Lax/,
    );
    expect(cookie).not.toContain('Secure');
    const dashboard = await browser.get(`/console/w/${slug}`);
    expect(dashboard.status).toBe(200);
    expect(visibleText(dashboard.body)).toContain('Dashboard');
    const policy = String(dashboard.headers['content-security-policy']);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe-inline');
    expect(dashboard.headers['x-frame-options']).toBe('DENY');
    expect(dashboard.headers['cache-control']).toBe('no-store');
  });

  it('sets the cookie Secure when PUBLIC_URL is https', async () => {
    const https = await openConsoleApp({ PUBLIC_URL: 'https://herald.example' });
    try {
      const { email } = await workspaceWith('owner');
      const signedIn = await new ConsoleBrowser(https.app).signIn(email, PASSWORD);
      expect(signedIn.status).toBe(303);
      expect(String(signedIn.headers['set-cookie'])).toMatch(/herald_session=.*; Secure/);
    } finally {
      await https.close();
    }
  });

  it('answers a wrong password with 401 and the form again', async () => {
    const { email } = await workspaceWith('owner');
    const page = await new ConsoleBrowser(server.app).signIn(email, 'wrong password');
    expect(page.status).toBe(401);
    expect(visibleText(page.body)).toContain('The email or password is incorrect.');
    expect(String(page.headers['set-cookie'] ?? '')).not.toContain('herald_session=');
  });

  it('throttles an account from one address after five failures (the right password included), with Retry-After', async () => {
    const { email } = await workspaceWith('owner');
    const attacker = new ConsoleBrowser(server.app);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      statuses.push((await attacker.signIn(email, 'wrong password')).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const sixth = await attacker.signIn(email, PASSWORD);
    expect(sixth.status).toBe(429);
    expect(sixth.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(800);
    expect(visibleText(sixth.body)).toContain(
      'Too many failed sign-in attempts. Try again in 15 minutes.',
    );
    // Not a lock-out anyone can cause: the owner, from their own address, signs in.
    expect((await new ConsoleBrowser(server.app).signIn(email, PASSWORD)).status).toBe(303);
  });

  it('throttles an address after twenty failures across accounts', async () => {
    const browser = new ConsoleBrowser(server.app);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 20; attempt++) {
      statuses.push(
        (await browser.signIn(`nobody-${attempt}-${randomBytes(3).toString('hex')}@x.test`, 'nope'))
          .status,
      );
    }
    expect(statuses.every((status) => status === 401)).toBe(true);
    const { email } = await workspaceWith('owner');
    const refused = await browser.signIn(email, PASSWORD);
    expect(refused.status).toBe(429);
    // The same account from another address is let in.
    expect((await new ConsoleBrowser(server.app).signIn(email, PASSWORD)).status).toBe(303);
  });

  it('signs out: the session is revoked and its cookie no longer opens a page', async () => {
    const { slug, email } = await workspaceWith('owner');
    const browser = new ConsoleBrowser(server.app);
    await browser.signIn(email, PASSWORD);
    await browser.get(`/console/w/${slug}`);
    const session = browser.cookies.get('herald_session');
    const out = await browser.post('/console/sign-out', {});
    expect(out.status).toBe(303);
    expect(out.location).toBe('/console/sign-in?signed_out=1');
    const replay = new ConsoleBrowser(server.app);
    replay.cookies.set('herald_session', session ?? '');
    const page = await replay.get(`/console/w/${slug}`);
    expect(page.status).toBe(303);
    expect(page.location).toMatch(/^\/console\/sign-in/);
  });
});

describe('CSRF', () => {
  it('refuses a state-changing request without the token: 403, a clear page, nothing created', async () => {
    const { slug, email } = await workspaceWith('owner');
    const browser = new ConsoleBrowser(server.app);
    await browser.signIn(email, PASSWORD);
    await browser.get(`/console/w/${slug}/developer/api-keys`);
    const missing = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      _csrf: null,
      abilities: 'messages:send',
    });
    expect(missing.status).toBe(403);
    expect(visibleText(missing.body)).toContain(
      'This form was not sent by a page of your current Herald session (its security token is missing or wrong), so nothing was changed.',
    );
    const wrong = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      _csrf: 'x'.repeat(43),
      abilities: 'messages:send',
    });
    expect(wrong.status).toBe(403);
    expect(await keyCount(slug)).toBe(0);
    // A token of another session of the same user is no token for this one.
    const other = new ConsoleBrowser(server.app);
    await other.signIn(email, PASSWORD);
    await other.get(`/console/w/${slug}/developer/api-keys`);
    const foreign = await browser.post(`/console/w/${slug}/developer/api-keys`, {
      _csrf: other.token ?? '',
      abilities: 'messages:send',
    });
    expect(foreign.status).toBe(403);
    expect(await keyCount(slug)).toBe(0);
  });

  it('refuses a sign-in form without its pre-session token', async () => {
    const { email } = await workspaceWith('owner');
    const browser = new ConsoleBrowser(server.app);
    const page = await browser.post('/console/sign-in', { email, password: PASSWORD });
    expect(page.status).toBe(403);
    expect(page.headers['set-cookie']).toBeUndefined();
  });

  it('refuses sign-out without the token and keeps the session', async () => {
    const { slug, email } = await workspaceWith('owner');
    const browser = new ConsoleBrowser(server.app);
    await browser.signIn(email, PASSWORD);
    expect((await browser.post('/console/sign-out', { _csrf: null })).status).toBe(403);
    expect((await browser.get(`/console/w/${slug}`)).status).toBe(200);
  });
});

describe('workspaces and permissions', () => {
  it("refuses a session's cookie on another workspace's pages and actions", async () => {
    const mine = await workspaceWith('owner');
    const theirs = await workspaceWith('owner');
    const browser = new ConsoleBrowser(server.app);
    await browser.signIn(mine.email, PASSWORD);
    await browser.get(`/console/w/${mine.slug}/developer/api-keys`);
    const page = await browser.get(`/console/w/${theirs.slug}/developer/api-keys`);
    expect(page.status).toBe(403);
    expect(visibleText(page.body)).toContain(
      `This page belongs to the workspace "${theirs.slug}", but this session is signed in to Console ${mine.slug}.`,
    );
    const action = await browser.post(`/console/w/${theirs.slug}/developer/api-keys`, {
      abilities: 'messages:send',
    });
    expect(action.status).toBe(403);
    expect(await keyCount(theirs.slug)).toBe(0);
    // Switching is refused too: not a member there.
    const switched = await browser.post('/console/workspaces', { workspace: theirs.slug });
    expect(switched.status).toBe(404);
  });

  it('switches to another workspace the user is a member of', async () => {
    const first = await workspaceWith('owner');
    const second = `c-${randomBytes(5).toString('hex')}`;
    await createWorkspace(server.deps, { name: 'Second', slug: second }, TEST_OPERATOR);
    await addUser(
      server.deps,
      {
        workspace: second,
        email: first.email,
        password: PASSWORD,
        role: 'viewer',
      },
      TEST_OPERATOR,
    );
    const browser = new ConsoleBrowser(server.app);
    await browser.signIn(first.email, PASSWORD);
    await browser.get('/console/workspaces');
    const switched = await browser.post('/console/workspaces', { workspace: second });
    expect(switched.status).toBe(303);
    expect(switched.location).toBe(`/console/w/${second}`);
    expect((await browser.get(`/console/w/${second}`)).status).toBe(200);
    expect((await browser.get(`/console/w/${first.slug}`)).status).toBe(403);
  });

  it('lets a developer create and revoke a key, and refuses a viewer both the page and the action', async () => {
    const { slug, email } = await workspaceWith('developer');
    const developer = new ConsoleBrowser(server.app);
    await developer.signIn(email, PASSWORD);
    await developer.get(`/console/w/${slug}/developer/api-keys`);
    const created = await developer.post(`/console/w/${slug}/developer/api-keys`, {
      name: 'Backend',
      abilities: ['messages:send', 'messages:read'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatch(/<code id="new-token">hld_[a-z0-9]{8}_[A-Za-z0-9_-]{43}<\/code>/);
    expect(await keyCount(slug)).toBe(1);

    const viewerEmail = `viewer@${slug}.test`;
    await addUser(
      server.deps,
      {
        workspace: slug,
        email: viewerEmail,
        password: PASSWORD,
        role: 'viewer',
      },
      TEST_OPERATOR,
    );
    const viewer = new ConsoleBrowser(server.app);
    await viewer.signIn(viewerEmail, PASSWORD);
    const dashboard = await viewer.get(`/console/w/${slug}`);
    expect(dashboard.status).toBe(200);
    expect(dashboard.body).not.toContain('/developer/api-keys');
    const page = await viewer.get(`/console/w/${slug}/developer/api-keys`);
    expect(page.status).toBe(403);
    expect(visibleText(page.body)).toContain('This needs the developer_tools.read permission');
    const action = await viewer.post(`/console/w/${slug}/developer/api-keys`, {
      abilities: 'messages:send',
    });
    expect(action.status).toBe(403);
    expect(await keyCount(slug)).toBe(1);
  });

  it('reads permissions live: a member removed after sign-in is refused on the next request', async () => {
    const { slug, email } = await workspaceWith('owner');
    const devEmail = `dev@${slug}.test`;
    await addUser(
      server.deps,
      {
        workspace: slug,
        email: devEmail,
        password: PASSWORD,
        role: 'developer',
      },
      TEST_OPERATOR,
    );
    const browser = new ConsoleBrowser(server.app);
    await browser.signIn(devEmail, PASSWORD);
    expect((await browser.get(`/console/w/${slug}/developer/api-keys`)).status).toBe(200);
    await server.sql`
      update workspace_members set status = 'suspended'
      where user_id = (select id from users where email = ${devEmail})`;
    const page = await browser.get(`/console/w/${slug}/developer/api-keys`);
    expect(page.status).toBe(403);
    expect(visibleText(page.body)).toContain('is suspended');
    expect(email).toBeTruthy();
  });
});

describe('invitations', () => {
  const tokenOf = async (slug: string, email: string, role: string) =>
    (await createInvitation(server.deps, { workspace: slug, email, role }, TEST_OPERATOR)).token;

  it('a new person sets a password and becomes a member with the invited role', async () => {
    const { slug } = await workspaceWith('owner');
    const email = `new-${randomBytes(3).toString('hex')}@${slug}.test`;
    const token = await tokenOf(slug, email, 'admin');
    const browser = new ConsoleBrowser(server.app);
    const form = await browser.get(`/console/invitations/${token}`);
    expect(form.status).toBe(200);
    expect(visibleText(form.body)).toContain(`You were invited as admin with ${email}`);
    const short = await browser.post(`/console/invitations/${token}`, {
      password: 'short',
      password_confirmation: 'short',
    });
    expect(short.status).toBe(422);
    expect(visibleText(short.body)).toContain('Password must be at least 8 characters');
    const mismatch = await browser.post(`/console/invitations/${token}`, {
      password: 'a long password',
      password_confirmation: 'another one',
    });
    expect(mismatch.status).toBe(422);
    expect(visibleText(mismatch.body)).toContain(
      'The repeated password does not match the password',
    );
    const accepted = await browser.post(`/console/invitations/${token}`, {
      password: 'a long password',
      password_confirmation: 'a long password',
    });
    expect(accepted.status).toBe(303);
    expect(accepted.location).toBe(`/console/w/${slug}`);
    expect((await browser.get(`/console/w/${slug}/developer/api-keys`)).status).toBe(200);
    const [member] = await server.sql<{ role: string; permissions: string[] }[]>`
      select m.role, m.permissions from workspace_members m join users u on u.id = m.user_id
      join workspaces w on w.id = m.workspace_id where w.slug = ${slug} and u.email = ${email}`;
    expect(member).toEqual({
      role: 'admin',
      permissions: [
        'developer_tools.read',
        'campaigns.read',
        'messages.read',
        'reports.read',
        'members.read',
        'recipients.read',
      ],
    });
    // Used once: the link is dead now, and the new password signs in.
    const again = await new ConsoleBrowser(server.app).get(`/console/invitations/${token}`);
    expect(again.status).toBe(404);
    expect(visibleText(again.body)).toContain(
      'This invitation link has already been used, was revoked or has expired.',
    );
    expect((await new ConsoleBrowser(server.app).signIn(email, 'a long password')).status).toBe(
      303,
    );
  });

  it('an email that has an account signs in with its password to accept', async () => {
    const home = await workspaceWith('owner');
    const { slug } = await workspaceWith('owner');
    const token = await tokenOf(slug, home.email, 'viewer');
    const browser = new ConsoleBrowser(server.app);
    const form = await browser.get(`/console/invitations/${token}`);
    expect(visibleText(form.body)).toContain('This email already has a Herald account');
    const wrong = await browser.post(`/console/invitations/${token}`, { password: 'not it' });
    expect(wrong.status).toBe(401);
    expect(visibleText(wrong.body)).toContain('The password is incorrect.');
    const accepted = await browser.post(`/console/invitations/${token}`, { password: PASSWORD });
    expect(accepted.status).toBe(303);
    expect(accepted.location).toBe(`/console/w/${slug}`);
    const [member] = await server.sql<{ role: string }[]>`
      select m.role from workspace_members m join users u on u.id = m.user_id
      join workspaces w on w.id = m.workspace_id where w.slug = ${slug} and u.email = ${home.email}`;
    expect(member?.role).toBe('viewer');
  });

  it('an unknown or malformed link is a 404 page, never a 500', async () => {
    const browser = new ConsoleBrowser(server.app);
    for (const token of ['nope', `hli_${'a'.repeat(43)}`]) {
      const page = await browser.get(`/console/invitations/${token}`);
      expect(page.status).toBe(404);
    }
    // A path fastify cannot decode is refused before any route: a bad request.
    expect((await browser.get('/console/invitations/%E0%A4%A')).status).toBe(400);
  });
});

describe('CONSOLE_ENABLED=false', () => {
  it('leaves /console and / unrouted', async () => {
    const off = await openConsoleApp({ CONSOLE_ENABLED: 'false' });
    try {
      expect((await off.app.inject({ method: 'GET', url: '/console' })).statusCode).toBe(404);
      expect((await off.app.inject({ method: 'GET', url: '/' })).statusCode).toBe(404);
      expect((await off.app.inject({ method: 'GET', url: '/console/sign-in' })).statusCode).toBe(
        404,
      );
    } finally {
      await off.close();
    }
  });
});

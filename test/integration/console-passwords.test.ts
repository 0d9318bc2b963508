/**
 * Passwords after sign-up (issue 31 item 5): a member changes theirs on the profile (the current
 * one proven, other browsers signed out, the change audited without the password); an owner or
 * admin issues a one-time reset link from Team and the member sets a new password there; an
 * operator sets one with `herald user set-password`, reading it from standard input. The
 * two-step set-up shows its key as a QR code drawn on the server (issue 31 item 5).
 */
import { randomBytes } from 'node:crypto';
import { encode } from 'uqr';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  completePasswordReset,
  findPasswordReset,
  issuePasswordReset,
} from '../../commands/team/passwords.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';
import { heraldEnv, runHerald } from '../support/processes.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';
const NEW_PASSWORD = 'battery staple 2';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function workspace() {
  const slug = `p-${randomBytes(5).toString('hex')}`;
  await createWorkspace(server.deps, { name: `Passwords ${slug}`, slug }, TEST_OPERATOR);
  return slug;
}

async function member(slug: string, role: 'owner' | 'admin' | 'developer') {
  const email = `${role}-${randomBytes(3).toString('hex')}@${slug}.test`;
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
  return { email, userId, browser: await signedIn(email, PASSWORD) };
}

async function signedIn(email: string, password: string) {
  const browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, password)).status).toBe(303);
  return browser;
}

async function signInStatus(email: string, password: string) {
  return (await new ConsoleBrowser(server.app).signIn(email, password)).status;
}

/** Whether the browser's session still opens the profile (a signed-out one is sent to sign in). */
async function stillSignedIn(browser: ConsoleBrowser) {
  return (await browser.get('/console/profile')).status === 200;
}

async function auditLines(action: string, target: string) {
  return server.sql<{ actor: string; source: string; details: Record<string, unknown> }[]>`
    select actor, source, details from audit_log where action = ${action} and target = ${target}`;
}

describe("changing one's password on the profile", () => {
  it('needs the current password; the old one stops working, other browsers are signed out, the change is audited', async () => {
    const slug = await workspace();
    const { email, browser } = await member(slug, 'developer');
    const other = await signedIn(email, PASSWORD);
    await browser.get('/console/profile');

    const wrong = await browser.post('/console/profile/password', {
      current_password: 'not my password',
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
    expect(wrong.status).toBe(422);
    expect(visibleText(wrong.body)).toContain('Current password is incorrect');
    const mismatch = await browser.post('/console/profile/password', {
      current_password: PASSWORD,
      password: NEW_PASSWORD,
      password_confirmation: `${NEW_PASSWORD}x`,
    });
    expect(mismatch.status).toBe(422);
    expect(visibleText(mismatch.body)).toContain(
      'The repeated password does not match the password',
    );
    expect(await stillSignedIn(other)).toBe(true);

    const changed = await browser.post('/console/profile/password', {
      current_password: PASSWORD,
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
    expect(changed.status).toBe(303);
    expect(changed.location).toBe('/console/profile?done=password_changed');
    expect(visibleText((await browser.get(changed.location as string)).body)).toContain(
      'Your password is changed. Other browsers signed in to your account were signed out.',
    );
    expect(await stillSignedIn(browser)).toBe(true);
    expect(await stillSignedIn(other)).toBe(false);
    expect(await signInStatus(email, PASSWORD)).toBe(401);
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(303);
    const lines = await auditLines('user.password_changed', `user ${email}`);
    expect(lines).toEqual([{ actor: email, source: 'console', details: { sessions_ended: 1 } }]);
    expect(JSON.stringify(lines)).not.toContain(NEW_PASSWORD);
  });
});

describe("an owner's or admin's password reset link", () => {
  it('is refused to a developer and for an owner by an admin', async () => {
    const slug = await workspace();
    const owner = await member(slug, 'owner');
    const admin = await member(slug, 'admin');
    const developer = await member(slug, 'developer');
    await developer.browser.get(`/console/w/${slug}`);
    const refused = await developer.browser.post(
      `/console/w/${slug}/team/members/${admin.userId}/password-reset`,
      {},
    );
    expect(refused.status).toBe(403);
    await admin.browser.get(`/console/w/${slug}/team`);
    const ownerRefused = await admin.browser.post(
      `/console/w/${slug}/team/members/${owner.userId}/password-reset`,
      {},
    );
    expect(ownerRefused.status).toBe(403);
    expect(visibleText(ownerRefused.body)).toContain("Only an owner can reset an owner's password");
    const [{ count } = { count: -1 }] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from password_resets where user_id in (${admin.userId}, ${owner.userId})`;
    expect(count).toBe(0);
  });

  it('is shown once to the admin; the member sets a new password at it, once, and is signed out everywhere', async () => {
    const slug = await workspace();
    const admin = await member(slug, 'admin');
    const developer = await member(slug, 'developer');
    const team = await admin.browser.get(`/console/w/${slug}/team`);
    expect(team.body).toContain(`/team/members/${developer.userId}/password-reset`);
    const issued = await admin.browser.post(
      `/console/w/${slug}/team/members/${developer.userId}/password-reset`,
      {},
    );
    expect(issued.status).toBe(200);
    const link =
      /<code id="password-reset-link">http:\/\/herald\.test(\/console\/password-reset\/hlr_[A-Za-z0-9_-]{43})<\/code>/.exec(
        issued.body,
      )?.[1];
    expect(link).toBeDefined();
    // Until the member uses it, their password and browsers are as they were.
    expect(await signInStatus(developer.email, PASSWORD)).toBe(303);
    expect(await stillSignedIn(developer.browser)).toBe(true);

    const visitor = new ConsoleBrowser(server.app);
    const form = await visitor.get(link as string);
    expect(form.status).toBe(200);
    expect(visibleText(form.body)).toContain(`For ${developer.email} . Every browser`);
    const short = await visitor.post(link as string, {
      password: 'short',
      password_confirmation: 'short',
    });
    expect(short.status).toBe(422);
    expect(visibleText(short.body)).toContain('New password must be at least 8 characters');
    const set = await visitor.post(link as string, {
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
    expect(set.status).toBe(200);
    expect(visibleText(set.body)).toContain(`The new password of ${developer.email} is set`);
    expect(await stillSignedIn(developer.browser)).toBe(false);
    expect(await signInStatus(developer.email, PASSWORD)).toBe(401);
    expect(await signInStatus(developer.email, NEW_PASSWORD)).toBe(303);
    expect((await visitor.get(link as string)).status).toBe(404);

    expect(await auditLines('user.password_reset_issued', `member ${developer.email}`)).toEqual([
      { actor: admin.email, source: 'console', details: { expires_in_hours: 24 } },
    ]);
    expect(await auditLines('user.password_reset', `user ${developer.email}`)).toEqual([
      { actor: developer.email, source: 'console', details: { sessions_ended: 2 } },
    ]);
  });

  it('is used once when ten browsers submit it at the same moment: one password wins, one line', async () => {
    const slug = await workspace();
    const admin = await member(slug, 'admin');
    const developer = await member(slug, 'developer');
    const { id: workspaceId } = (
      await server.sql<{ id: number }[]>`select id from workspaces where slug = ${slug}`
    )[0] as { id: number };
    const { token } = await issuePasswordReset(server.deps, TEST_OPERATOR, {
      workspaceId,
      userId: developer.userId,
      by: { userId: admin.userId, role: 'admin' },
    });
    const reset = await findPasswordReset(server.deps, token);
    expect(reset).toBeDefined();
    const passwords = Array.from({ length: 10 }, (_, index) => `racing password ${index}`);
    const outcomes = await Promise.allSettled(
      passwords.map((password) =>
        completePasswordReset(server.deps, reset as NonNullable<typeof reset>, {
          password,
          passwordConfirmation: password,
          address: '127.0.0.1',
          userAgent: null,
        }),
      ),
    );
    const won = outcomes.flatMap((outcome, index) =>
      outcome.status === 'fulfilled' ? [passwords[index] as string] : [],
    );
    expect(won).toHaveLength(1);
    for (const outcome of outcomes)
      if (outcome.status === 'rejected')
        expect((outcome.reason as Error).message).toBe(
          'This reset link has already been used, was replaced by a newer one or has expired',
        );
    const signIns = await Promise.all(passwords.map((p) => signInStatus(developer.email, p)));
    expect(passwords.filter((_, index) => signIns[index] === 303)).toEqual(won);
    expect(await auditLines('user.password_reset', `user ${developer.email}`)).toHaveLength(1);
  });
});

describe('herald user set-password', () => {
  const env = () =>
    heraldEnv({ DATABASE_URL: inject('databaseUrl'), HERALD_SECRET: inject('secret') });

  it('reads the password from standard input, never argv, and signs the user out', async () => {
    const slug = await workspace();
    const { email, browser } = await member(slug, 'owner');
    const short = await runHerald(
      ['user', 'set-password', '--email', email],
      env(),
      90_000,
      'short\n',
    );
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('--password must be at least 8 characters');

    const result = await runHerald(
      ['user', 'set-password', '--email', email, '--json'],
      env(),
      90_000,
      `${NEW_PASSWORD}\n`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ email, sessions_ended: 1 });
    expect(await stillSignedIn(browser)).toBe(false);
    expect(await signInStatus(email, PASSWORD)).toBe(401);
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(303);
    const [line] = await auditLines('user.password_changed', `user ${email}`);
    expect(line?.source).toBe('cli');
    expect(line?.details).toEqual({ sessions_ended: 1 });
  });
});

describe("the profile's two-step set-up", () => {
  it('shows the key as a QR code drawn on the server, carrying the otpauth URI of the link', async () => {
    const { browser } = await member(await workspace(), 'developer');
    await browser.get('/console/profile');
    const started = await browser.post('/console/profile/totp', {});
    const svg = /<div class="qr" id="totp-qr">(<svg [\s\S]*?<\/svg>)<\/div>/.exec(
      started.body,
    )?.[1];
    expect(svg).toBeDefined();
    expect(svg).not.toMatch(/style=|<script/);
    const uri = /<a href="([^"]+)" id="totp-uri">/
      .exec(started.body)?.[1]
      ?.replaceAll('&amp;', '&');
    expect(uri).toMatch(/^otpauth:\/\/totp\/Herald:/);
    // The dark modules the SVG draws (10 px squares) are those of the URI's QR code.
    const drawn = [...(svg ?? '').matchAll(/M(\d+),(\d+)h10v10h-10z/g)].map(
      ([, x, y]) => `${Number(y) / 10},${Number(x) / 10}`,
    );
    const expected = encode(uri ?? '', { border: 4 }).data.flatMap((row, y) =>
      row.flatMap((dark, x) => (dark ? [`${y},${x}`] : [])),
    );
    expect(drawn.sort()).toEqual(expected.sort());
  });
});

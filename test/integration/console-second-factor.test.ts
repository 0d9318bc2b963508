/**
 * TOTP (RFC 6238) in the console: enrolment from the profile (the first code confirms it), the
 * code asked after the password with no page open before it, a code used once, wrong codes
 * throttled, and an owner's requirement sending members without a factor to set one up.
 */
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetMemberSecondFactor } from '../../commands/team/totp.js';
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

async function member(role: 'owner' | 'admin' | 'developer', slug?: string) {
  const workspace = slug ?? `t-${randomBytes(5).toString('hex')}`;
  if (!slug)
    await createWorkspace(
      server.deps,
      { name: `Two-step ${workspace}`, slug: workspace },
      TEST_OPERATOR,
    );
  const email = `${role}-${randomBytes(3).toString('hex')}@${workspace}.test`;
  await addUser(server.deps, { workspace, email, password: PASSWORD, role }, TEST_OPERATOR);
  const browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return { slug: workspace, email, browser };
}

/** The code of the authenticator app, `stepsAhead` periods from now. */
function codeFor(secret: string, stepsAhead = 0): string {
  return new TOTP({
    secret: Secret.fromBase32(secret),
    digits: 6,
    period: 30,
    algorithm: 'SHA1',
  }).generate({
    timestamp: Date.now() + stepsAhead * 30_000,
  });
}

/** Sets up TOTP from the profile, confirming with the code `stepsAhead` periods from now. */
async function enrol(browser: ConsoleBrowser, stepsAhead = 0): Promise<string> {
  await browser.get('/console/profile');
  const started = await browser.post('/console/profile/totp', {});
  expect(started.status).toBe(200);
  const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(started.body)?.[1] ?? '';
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  expect(started.body).toContain(`otpauth://totp/Herald:`);
  const confirmed = await browser.post('/console/profile/totp/confirm', {
    code: codeFor(secret, stepsAhead),
  });
  expect(confirmed.status).toBe(303);
  expect(confirmed.location).toBe('/console/profile?done=enrolled');
  return secret;
}

describe('TOTP second factor', () => {
  it('is enrolled from the profile; a wrong first code is refused and changes nothing', async () => {
    const { browser, email } = await member('owner');
    await browser.get('/console/profile');
    const started = await browser.post('/console/profile/totp', {});
    const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(started.body)?.[1] ?? '';
    const wrong = await browser.post('/console/profile/totp/confirm', {
      code: '000000' === codeFor(secret) ? '111111' : '000000',
    });
    expect(wrong.status).toBe(422);
    expect(visibleText(wrong.body)).toContain('That code is not right.');
    const [before] = await server.sql<{ enabled: boolean }[]>`
      select totp_enabled_at is not null as enabled from users where email = ${email}`;
    expect(before?.enabled).toBe(false);
    const confirmed = await browser.post('/console/profile/totp/confirm', {
      code: codeFor(secret),
    });
    expect(confirmed.status).toBe(303);
    const page = await browser.get('/console/profile?done=enrolled');
    expect(visibleText(page.body)).toContain('Two-step verification is on.');
  });

  it('asks for the code after the password; no page opens before it; a code is accepted once', async () => {
    const { browser, email, slug } = await member('owner');
    const secret = await enrol(browser);
    const again = new ConsoleBrowser(server.app);
    const signedIn = await again.signIn(email, PASSWORD);
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/console/sign-in/code');
    const blocked = await again.get(`/console/w/${slug}`);
    expect(blocked.status).toBe(303);
    expect(blocked.location).toBe('/console/sign-in/code');
    await again.get('/console/sign-in/code');
    expect(
      (await again.post('/console/sign-in/code', { _csrf: null, code: codeFor(secret, 1) })).status,
    ).toBe(403);
    const next = codeFor(secret, 1);
    const accepted = await again.post('/console/sign-in/code', { code: next });
    expect(accepted.status).toBe(303);
    expect(accepted.location).toBe(`/console/w/${slug}`);
    expect((await again.get(`/console/w/${slug}`)).status).toBe(200);
    // The same code again, in another browser: used.
    const third = new ConsoleBrowser(server.app);
    await third.signIn(email, PASSWORD);
    await third.get('/console/sign-in/code');
    const replay = await third.post('/console/sign-in/code', { code: next });
    expect(replay.status).toBe(401);
    expect(visibleText(replay.body)).toContain('That code is not right.');
  });

  it('throttles wrong codes after five failures', async () => {
    const { browser, email } = await member('owner');
    const secret = await enrol(browser);
    const again = new ConsoleBrowser(server.app);
    await again.signIn(email, PASSWORD);
    await again.get('/console/sign-in/code');
    const wrongCode = codeFor(secret) === '123456' ? '654321' : '123456';
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++)
      statuses.push((await again.post('/console/sign-in/code', { code: wrongCode })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const refused = await again.post('/console/sign-in/code', { code: codeFor(secret, 1) });
    expect(refused.status).toBe(429);
    expect(visibleText(refused.body)).toContain('Too many wrong codes. Try again in 15 minutes.');
  });

  it('an owner requires it: members without a factor are sent to set one up', async () => {
    const owner = await member('owner');
    await owner.browser.get('/console/profile');
    const withoutFactor = await owner.browser.post(
      `/console/w/${owner.slug}/security/second-factor`,
      {
        required: 'true',
      },
    );
    expect(withoutFactor.status).toBe(409);
    expect(visibleText(withoutFactor.body)).toContain(
      'Set up your own second factor before requiring one of every member',
    );
    await enrol(owner.browser);
    await owner.browser.get('/console/profile');
    const required = await owner.browser.post(`/console/w/${owner.slug}/security/second-factor`, {
      required: 'true',
    });
    expect(required.status).toBe(303);
    const developer = await member('developer', owner.slug);
    const sent = await developer.browser.get(`/console/w/${owner.slug}`);
    expect(sent.status).toBe(303);
    expect(sent.location).toBe('/console/profile?required=1');
    const profile = await developer.browser.get('/console/profile?required=1');
    expect(profile.status).toBe(200);
    expect(visibleText(profile.body)).toContain(
      'requires two-step verification. Set it up to continue.',
    );
    await enrol(developer.browser);
    expect((await developer.browser.get(`/console/w/${owner.slug}`)).status).toBe(200);
  });
});

describe('turning TOTP off and resetting it', () => {
  /** A code that is not the app's current one (nor the next's). */
  const wrongCodeFor = (secret: string) =>
    ['000000', '111111', '222222'].find(
      (code) =>
        code !== codeFor(secret) && code !== codeFor(secret, 1) && code !== codeFor(secret, -1),
    ) as string;

  const enrolledAt = async (email: string) =>
    (
      await server.sql<{ enabled: boolean }[]>`
        select totp_enabled_at is not null as enabled from users where email = ${email}`
    )[0]?.enabled;

  const auditOf = (email: string, action: string) =>
    server.sql<{ actor: string; target: string | null; details: object; source: string }[]>`
      select a.actor, a.target, a.details, a.source from audit_log a
      join users u on u.id = a.user_id
      where u.email = ${email} and a.action = ${action} order by a.id`;

  it('a user turns it off with their password and a current code; a wrong code is refused inline', async () => {
    const { browser, email, slug } = await member('owner');
    // Each code is used once and never an older one after it: the previous period's code enrols,
    // this period's signs the other browser in, and the next period's turns the factor off.
    const secret = await enrol(browser, -1);
    const other = new ConsoleBrowser(server.app);
    await other.signIn(email, PASSWORD);
    await other.get('/console/sign-in/code');
    expect((await other.post('/console/sign-in/code', { code: codeFor(secret) })).status).toBe(303);

    await browser.get('/console/profile');
    const wrongCode = await browser.post('/console/profile/totp/disable', {
      password: PASSWORD,
      code: wrongCodeFor(secret),
    });
    expect(wrongCode.status).toBe(422);
    expect(/<div class="field-error" role="alert">([^<]*)<\/div>/.exec(wrongCode.body)?.[1]).toBe(
      'That code is not right. Enter the current code from your authenticator app.',
    );
    expect(wrongCode.body).toContain('<details id="turn-off" open>');
    const wrongPassword = await browser.post('/console/profile/totp/disable', {
      password: 'not my password',
      code: codeFor(secret, 1),
    });
    expect(wrongPassword.status).toBe(422);
    expect(
      /<div class="field-error" role="alert">([^<]*)<\/div>/.exec(wrongPassword.body)?.[1],
    ).toBe('The password is incorrect.');
    expect(await enrolledAt(email)).toBe(true);
    expect((await other.get(`/console/w/${slug}`)).status).toBe(200);

    const off = await browser.post('/console/profile/totp/disable', {
      password: PASSWORD,
      code: codeFor(secret, 1),
    });
    expect(off.status).toBe(303);
    expect(off.location).toBe('/console/profile?done=disabled');
    expect(await enrolledAt(email)).toBe(false);
    const page = await browser.get('/console/profile?done=disabled');
    expect(visibleText(page.body)).toContain(
      'Two-step verification is off. Other browsers signed in to your account were signed out.',
    );
    expect(page.body).toContain('Set up two-step verification');
    // The other browser is signed out; signing in again asks for no code.
    expect((await other.get(`/console/w/${slug}`)).location).toMatch(/^\/console\/sign-in\?/);
    const again = await new ConsoleBrowser(server.app).signIn(email, PASSWORD);
    expect(again.location).toBe(`/console/w/${slug}`);
    expect(await auditOf(email, 'second_factor.disabled')).toEqual([
      {
        actor: email,
        target: `user ${email}`,
        details: { sessions_ended: 1 },
        source: 'console',
      },
    ]);
  });

  it('an owner resets a member’s factor: their browsers are signed out and they must set it up again', async () => {
    const owner = await member('owner');
    await enrol(owner.browser);
    await owner.browser.get('/console/profile');
    await owner.browser.post(`/console/w/${owner.slug}/security/second-factor`, {
      required: 'true',
    });
    const developer = await member('developer', owner.slug);
    await enrol(developer.browser);
    expect((await developer.browser.get(`/console/w/${owner.slug}`)).status).toBe(200);

    const profile = await owner.browser.get('/console/profile');
    expect(visibleText(profile.body)).toContain("Members' two-step verification");
    expect(profile.body).toContain(`<input type="hidden" name="email" value="${developer.email}">`);
    const reset = await owner.browser.post(
      `/console/w/${owner.slug}/security/second-factor/reset`,
      { email: developer.email },
    );
    expect(reset.status).toBe(303);
    expect(reset.location).toBe('/console/profile?done=reset');
    expect(await enrolledAt(developer.email)).toBe(false);

    const signedOut = await developer.browser.get(`/console/w/${owner.slug}`);
    expect(signedOut.status).toBe(303);
    expect(signedOut.location).toMatch(/^\/console\/sign-in\?/);
    const back = new ConsoleBrowser(server.app);
    const signedIn = await back.signIn(developer.email, PASSWORD);
    expect(signedIn.location).toBe(`/console/w/${owner.slug}`);
    const sent = await back.get(`/console/w/${owner.slug}`);
    expect(sent.status).toBe(303);
    expect(sent.location).toBe('/console/profile?required=1');
    await enrol(back);
    expect((await back.get(`/console/w/${owner.slug}`)).status).toBe(200);

    const [entry] = await server.sql<
      { actor: string; action: string; target: string; details: object }[]
    >`
      select a.actor, a.action, a.target, a.details from audit_log a
      join workspaces w on w.id = a.workspace_id
      where w.slug = ${owner.slug} and a.action = 'second_factor.reset'`;
    expect(entry).toEqual({
      actor: owner.email,
      action: 'second_factor.reset',
      target: `member ${developer.email}`,
      details: { sessions_ended: 1 },
    });
  });

  it('refuses a reset by a developer, and an admin’s reset of an owner', async () => {
    const owner = await member('owner');
    await enrol(owner.browser);
    const developer = await member('developer', owner.slug);
    await developer.browser.get('/console/profile');
    expect(developer.browser.token).toBeTruthy();
    const byDeveloper = await developer.browser.post(
      `/console/w/${owner.slug}/security/second-factor/reset`,
      { email: owner.email },
    );
    expect(byDeveloper.status).toBe(403);
    expect(visibleText(byDeveloper.body)).toContain(
      'This needs the members.read permission and the owner or admin role in this workspace.',
    );

    const admin = await member('developer', owner.slug);
    await server.sql`
      update workspace_members set role = 'admin',
        permissions = array['developer_tools.read', 'campaigns.read', 'messages.read',
                            'reports.read', 'members.read']
      where user_id = (select id from users where email = ${admin.email})`;
    const page = await admin.browser.get('/console/profile');
    expect(page.body).not.toContain(`name="email" value="${owner.email}"`);
    const byAdmin = await admin.browser.post(
      `/console/w/${owner.slug}/security/second-factor/reset`,
      { email: owner.email },
    );
    expect(byAdmin.status).toBe(403);
    expect(/<div class="alert error" role="alert">([^<]*)<\/div>/.exec(byAdmin.body)?.[1]).toBe(
      'Only an owner can reset an owner&#39;s two-step verification',
    );
    expect(await enrolledAt(owner.email)).toBe(true);
    expect(await auditOf(owner.email, 'second_factor.reset')).toEqual([]);
  });

  it('refuses a reset of a member whose factor also guards a workspace the resetter does not manage', async () => {
    const owner = await member('owner');
    const admin = await member('admin', owner.slug);
    const both = await member('developer', owner.slug);
    await enrol(both.browser);
    const elsewhere = `t-${randomBytes(5).toString('hex')}`;
    await createWorkspace(
      server.deps,
      { name: `Two-step ${elsewhere}`, slug: elsewhere },
      TEST_OPERATOR,
    );
    await addUser(
      server.deps,
      {
        workspace: elsewhere,
        email: both.email,
        password: PASSWORD,
        role: 'owner',
      },
      TEST_OPERATOR,
    );

    const refusal = `${both.email} also belongs to a workspace you do not manage, which their two-step verification protects too; only they can turn it off`;
    // Neither A's admin nor A's owner is in B, where the member is owner: no button, no reset.
    for (const resetter of [admin, owner]) {
      const page = await resetter.browser.get('/console/profile');
      expect(visibleText(page.body)).toContain("Members' two-step verification");
      expect(page.body).not.toContain(`name="email" value="${both.email}"`);
      const refused = await resetter.browser.post(
        `/console/w/${owner.slug}/security/second-factor/reset`,
        { email: both.email },
      );
      expect(refused.status).toBe(403);
      expect(/<div class="alert error" role="alert">([^<]*)<\/div>/.exec(refused.body)?.[1]).toBe(
        refusal,
      );
      expect(await auditOf(resetter.email, 'second_factor.reset')).toEqual([]);
    }
    expect(await enrolledAt(both.email)).toBe(true);
    expect((await both.browser.get(`/console/w/${owner.slug}`)).status).toBe(200);

    // The use-case itself refuses, whatever front end calls it.
    const [adminRow] = await server.sql<{ workspaceId: number; userId: number }[]>`
      select m.workspace_id, m.user_id from workspace_members m
      join users u on u.id = m.user_id where u.email = ${admin.email}`;
    await expect(
      resetMemberSecondFactor(
        server.deps,
        {
          workspaceId: adminRow?.workspaceId ?? 0,
          email: both.email,
          by: { userId: adminRow?.userId ?? 0, role: 'admin' },
        },
        TEST_OPERATOR,
      ),
    ).rejects.toThrow(refusal);
    expect(await enrolledAt(both.email)).toBe(true);

    // Once A's owner also owns B, the factor guards nothing beyond them: the button and the reset.
    await addUser(
      server.deps,
      {
        workspace: elsewhere,
        email: owner.email,
        password: PASSWORD,
        role: 'owner',
      },
      TEST_OPERATOR,
    );
    const page = await owner.browser.get('/console/profile');
    expect(page.body).toContain(`<input type="hidden" name="email" value="${both.email}">`);
    const reset = await owner.browser.post(
      `/console/w/${owner.slug}/security/second-factor/reset`,
      { email: both.email },
    );
    expect(reset.status).toBe(303);
    expect(reset.location).toBe('/console/profile?done=reset');
    expect(await enrolledAt(both.email)).toBe(false);
  });
});

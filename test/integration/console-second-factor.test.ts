/**
 * TOTP (RFC 6238) in the console: enrolment from the profile (the first code confirms it), the
 * code asked after the password with no page open before it, a code used once, wrong codes
 * throttled, and an owner's requirement sending members without a factor to set one up.
 */
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../commands/users.js';
import { createWorkspace } from '../../commands/workspaces.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function member(role: 'owner' | 'developer', slug?: string) {
  const workspace = slug ?? `t-${randomBytes(5).toString('hex')}`;
  if (!slug) await createWorkspace(server.deps, { name: `Two-step ${workspace}`, slug: workspace });
  const email = `${role}-${randomBytes(3).toString('hex')}@${workspace}.test`;
  await addUser(server.deps, { workspace, email, password: PASSWORD, role });
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

async function enrol(browser: ConsoleBrowser): Promise<string> {
  await browser.get('/console/profile');
  const started = await browser.post('/console/profile/totp', {});
  expect(started.status).toBe(200);
  const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(started.body)?.[1] ?? '';
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  expect(started.body).toContain(`otpauth://totp/Herald:`);
  const confirmed = await browser.post('/console/profile/totp/confirm', { code: codeFor(secret) });
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

/**
 * More services → OTP in the console: a service created with the REST rules (a refusal shown at
 * its field), its slug sending a code over REST, deletion, and a viewer refused.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../commands/api-keys.js';
import { addCredits } from '../../commands/credits.js';
import { addUser } from '../../commands/users.js';
import { createWorkspace } from '../../commands/workspaces.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function signedIn(role: 'developer' | 'viewer') {
  const slug = `s-${randomBytes(5).toString('hex')}`;
  await createWorkspace(server.deps, { name: `OTP ${slug}`, slug });
  const email = `${role}@${slug}.test`;
  await addUser(server.deps, { workspace: slug, email, password: PASSWORD, role });
  const browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return { slug, email, browser };
}

describe('OTP services', () => {
  it('creates a service whose slug sends a code over REST, then deletes it', async () => {
    const { slug, browser } = await signedIn('developer');
    await browser.get(`/console/w/${slug}/otp-services`);
    const refused = await browser.post(`/console/w/${slug}/otp-services`, {
      name: 'Login',
      purpose: 'login',
      code_length: '9',
      expires_in_minutes: '5',
    });
    expect(refused.status).toBe(422);
    expect(visibleText(refused.body)).toContain('Code length must be');
    const created = await browser.post(`/console/w/${slug}/otp-services`, {
      name: 'Login',
      purpose: 'login',
      code_length: '7',
      expires_in_minutes: '3',
      message_template: 'Your Acme code: {code}',
    });
    expect(created.status).toBe(201);
    const serviceSlug = /<code id="new-service-slug">([0-9a-f-]{36})<\/code>/.exec(
      created.body,
    )?.[1];
    expect(serviceSlug).toBeDefined();

    await addCredits(server.deps, { workspace: slug, amount: 10 });
    const { token } = await createApiKey(server.deps, { workspace: slug, abilities: ['otp:send'] });
    const sent = await server.app.inject({
      method: 'POST',
      url: '/api/v1/otp/send',
      headers: { authorization: `Bearer ${token}` },
      payload: {
        recipient: `+6143${String(randomInt(10_000_000)).padStart(7, '0')}`,
        service_slug: serviceSlug,
      },
    });
    expect(sent.statusCode).toBe(202);

    await browser.get(`/console/w/${slug}/otp-services`);
    const deleted = await browser.post(`/console/w/${slug}/otp-services/${serviceSlug}/delete`, {});
    expect(deleted.status).toBe(303);
    const [row] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from otp_services where slug = ${serviceSlug ?? ''}::uuid`;
    expect(row?.count).toBe(0);
  });

  it('refuses a viewer', async () => {
    const { slug, browser } = await signedIn('viewer');
    expect((await browser.get(`/console/w/${slug}/otp-services`)).status).toBe(403);
  });
});

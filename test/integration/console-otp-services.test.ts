/**
 * More services → OTP in the console: a service created and edited with the REST rules (a
 * refusal shown at its field), its slug sending a code over REST whose message shows the edit at
 * the simulator's inbox; templates and sender ids listed, created and deleted with their rules
 * (one bad input each, shown inline), never deleted from under a service; audit entries; a
 * viewer refused.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addCredits } from '../../commands/otp/credits.js';
import { createApiKey } from '../../commands/team/api-keys.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { insertProvider } from '../../db/providers.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const simulators: RunningSimulator[] = [];
const PASSWORD = 'correct horse 1';
/** A send reaches the simulator through its workflow: seconds on a busy machine. */
const POLL = { timeout: 30_000, interval: 100 };

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(async () => {
  await Promise.all(simulators.map((simulator) => simulator.close()));
  await server.close();
});

async function signedIn(
  role: 'developer' | 'viewer',
  slug = `s-${randomBytes(5).toString('hex')}`,
) {
  const [existing] = await server.sql`select 1 from workspaces where slug = ${slug}`;
  if (!existing) await createWorkspace(server.deps, { name: `OTP ${slug}`, slug }, TEST_OPERATOR);
  const email = `${role}@${slug}.test`;
  await addUser(server.deps, { workspace: slug, email, password: PASSWORD, role }, TEST_OPERATOR);
  const browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return { slug, email, browser };
}

/** A simulator of its own, registered as the workspace's provider `providerSlug`. */
async function simulatorProvider(workspace: string, providerSlug: string) {
  const simulator = await startSimulator({ port: 0 });
  simulators.push(simulator);
  const [row] = await server.sql<
    { id: number }[]
  >`select id from workspaces where slug = ${workspace}`;
  await insertProvider(server.sql, {
    workspaceId: row?.id ?? 0,
    slug: providerSlug,
    name: providerSlug,
    type: 'simulator',
    requiresSenderId: false,
    settings: { base_url: simulator.url },
  });
  return simulator;
}

const mobile = () => `+6143${String(randomInt(10_000_000)).padStart(7, '0')}`;

async function inbox(simulatorUrl: string, to: string) {
  const response = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(to)}`);
  return ((await response.json()) as { messages: { body: string; from: string | null }[] })
    .messages;
}

async function sendCode(workspace: string, serviceSlug: string, recipient: string) {
  const { token } = await createApiKey(
    server.deps,
    { workspace, abilities: ['otp:send'] },
    TEST_OPERATOR,
  );
  return server.app.inject({
    method: 'POST',
    url: '/api/v1/otp/send',
    headers: { authorization: `Bearer ${token}` },
    payload: { recipient, service_slug: serviceSlug },
  });
}

/** The workspace's audit entries of this page's actions, oldest first (sign-ins left out). */
async function auditActions(workspace: string): Promise<string[]> {
  const rows = await server.sql<{ action: string }[]>`
    select a.action from audit_log a join workspaces w on w.id = a.workspace_id
    where w.slug = ${workspace}
      and a.action like any (array['otp_service.%', 'template.%', 'sender.%'])
    order by a.id`;
  return rows.map((row) => row.action);
}

const createdSlug = (body: string) =>
  /<code id="new-service-slug">([0-9a-f-]{36})<\/code>/.exec(body)?.[1] ?? '';

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
    const serviceSlug = createdSlug(created.body);
    expect(serviceSlug).not.toBe('');

    await addCredits(server.deps, { workspace: slug, amount: 10 }, TEST_OPERATOR);
    const sent = await sendCode(slug, serviceSlug, mobile());
    expect(sent.statusCode).toBe(202);

    await browser.get(`/console/w/${slug}/otp-services`);
    const deleted = await browser.post(`/console/w/${slug}/otp-services/${serviceSlug}/delete`, {});
    expect(deleted.status).toBe(303);
    const [row] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from otp_services where slug = ${serviceSlug}::uuid`;
    expect(row?.count).toBe(0);
  });

  it('edits a service: the next code over REST has its new message, length, provider and sender', async () => {
    const { slug, browser } = await signedIn('developer');
    const own = await simulatorProvider(slug, 'edited-sim');
    await browser.get(`/console/w/${slug}/otp-services`);
    const created = await browser.post(`/console/w/${slug}/otp-services`, {
      name: 'Login',
      purpose: 'login',
      code_length: '6',
      expires_in_minutes: '5',
      message_template: 'Acme code {code}',
    });
    const serviceSlug = createdSlug(created.body);
    await addCredits(server.deps, { workspace: slug, amount: 10 }, TEST_OPERATOR);
    const before = mobile();
    expect((await sendCode(slug, serviceSlug, before)).statusCode).toBe(202);
    await expect
      .poll(async () => (await inbox(inject('simulatorUrl'), before)).length, POLL)
      .toBe(1);

    // The sender the edit will name, registered on its page: approved, the provider being the workspace's own.
    await browser.get(`/console/w/${slug}/otp-senders`);
    expect(
      (
        await browser.post(`/console/w/${slug}/otp-senders`, {
          provider: 'edited-sim',
          sender: 'AcmeSec',
        })
      ).status,
    ).toBe(201);

    const editPage = await browser.get(`/console/w/${slug}/otp-services/${serviceSlug}/edit`);
    expect(editPage.status).toBe(200);
    expect(editPage.body).toContain(
      `<code id="service-slug">${serviceSlug}</code><button type="button" class="secondary" data-copy="service-slug">Copy</button>`,
    );
    expect(editPage.body).toContain('value="Acme code {code}"');

    const edit = {
      name: 'Login (edited)',
      purpose: 'login',
      code_length: '8',
      expires_in_minutes: '5',
      template: '',
      message_template: 'Acme sign-in: {code}',
      sender_id: 'AcmeSec',
      provider: 'edited-sim',
    };
    const refused = await browser.post(`/console/w/${slug}/otp-services/${serviceSlug}/edit`, {
      ...edit,
      message_template: 'Acme sign-in without a code',
    });
    expect(refused.status).toBe(422);
    expect(visibleText(refused.body)).toContain(
      'Message: the message template must contain {code} exactly once',
    );
    expect(refused.body).toContain(
      '<div class="field-error">Message: the message template must contain {code} exactly once</div>',
    );

    const saved = await browser.post(`/console/w/${slug}/otp-services/${serviceSlug}/edit`, edit);
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/console/w/${slug}/otp-services?done=updated`);
    const listed = await browser.get(saved.location ?? '');
    expect(visibleText(listed.body)).toContain('The OTP service was saved.');
    expect(visibleText(listed.body)).toContain('Login (edited)');

    const after = mobile();
    const sent = await sendCode(slug, serviceSlug, after);
    expect(sent.statusCode).toBe(202);
    await expect.poll(async () => (await inbox(own.url, after)).length, POLL).toBe(1);
    const [message] = await inbox(own.url, after);
    expect(message?.body).toMatch(/^Acme sign-in: \d{8}$/);
    expect(message?.from).toBe('AcmeSec');

    // Clearing the optional settings: the default message through own again, no sender.
    const cleared = await browser.post(`/console/w/${slug}/otp-services/${serviceSlug}/edit`, {
      ...edit,
      message_template: '',
      sender_id: '',
      provider: '',
    });
    expect(cleared.status).toBe(303);
    const [row] = await server.sql`
      select code_length, template_slug, message_template, sender_id, provider_slug
      from otp_services where slug = ${serviceSlug}::uuid`;
    expect(row).toEqual({
      codeLength: 8,
      templateSlug: null,
      messageTemplate: null,
      senderId: null,
      providerSlug: null,
    });
    expect(await auditActions(slug)).toEqual([
      'otp_service.created',
      'sender.registered',
      'otp_service.updated',
      'otp_service.updated',
    ]);
  });

  it("does not edit another workspace's service", async () => {
    const theirs = await signedIn('developer');
    await theirs.browser.get(`/console/w/${theirs.slug}/otp-services`);
    const created = await theirs.browser.post(`/console/w/${theirs.slug}/otp-services`, {
      name: 'Theirs',
      purpose: 'login',
    });
    const serviceSlug = createdSlug(created.body);
    const mine = await signedIn('developer');
    const page = await mine.browser.get(`/console/w/${mine.slug}/otp-services/${serviceSlug}/edit`);
    expect(page.status).toBe(404);
    expect(visibleText(page.body)).toContain(
      `OTP service "${serviceSlug}" is not an OTP service of ${mine.slug}`,
    );
    const posted = await mine.browser.post(
      `/console/w/${mine.slug}/otp-services/${serviceSlug}/edit`,
      { name: 'Taken over', purpose: 'login' },
    );
    expect(posted.status).toBe(404);
    const [row] = await server.sql`select name from otp_services where slug = ${serviceSlug}::uuid`;
    expect(row).toEqual({ name: 'Theirs' });
  });

  it('refuses a viewer', async () => {
    const { slug, browser } = await signedIn('viewer');
    expect((await browser.get(`/console/w/${slug}/otp-services`)).status).toBe(403);
  });
});

describe('Templates', () => {
  it('creates, lists and deletes a template; one a service uses is not deleted', async () => {
    const { slug, browser } = await signedIn('developer');
    const empty = await browser.get(`/console/w/${slug}/otp-templates`);
    expect(empty.status).toBe(200);
    expect(visibleText(empty.body)).toContain('No templates yet');

    const bad = await browser.post(`/console/w/${slug}/otp-templates`, {
      slug: 'Bad Slug',
      body: 'Your code is {code}',
      purpose: 'transactional',
      enabled: 'on',
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toContain(
      '<div class="field-error">Slug &quot;Bad Slug&quot; must be lowercase letters, digits, - or _ (at most 63)</div>',
    );

    for (const [templateSlug, body] of [
      ['login-code', 'Your Acme login code is {code}'],
      ['spare', 'Spare code {code}'],
    ] as const) {
      const created = await browser.post(`/console/w/${slug}/otp-templates`, {
        slug: templateSlug,
        name: '',
        body,
        purpose: 'transactional',
        enabled: 'on',
      });
      expect(created.status).toBe(201);
    }
    const listed = await browser.get(`/console/w/${slug}/otp-templates`);
    const text = visibleText(listed.body);
    expect(text).toContain('login-code Your Acme login code is {code} transactional Enabled');
    expect(text).toContain('spare Spare code {code} transactional Enabled');

    await browser.get(`/console/w/${slug}/otp-services`);
    const service = await browser.post(`/console/w/${slug}/otp-services`, {
      name: 'Templated',
      purpose: 'login',
      template: 'login-code',
    });
    expect(service.status).toBe(201);

    await browser.get(`/console/w/${slug}/otp-templates`);
    const inUse = await browser.post(`/console/w/${slug}/otp-templates/login-code/delete`, {});
    expect(inUse.status).toBe(409);
    expect(visibleText(inUse.body)).toContain(
      'The OTP service "Templated" sends with the template "login-code"; change it first',
    );
    const broken = await browser.post(`/console/w/${slug}/otp-templates/login-code/edit`, {
      name: 'login-code',
      body: 'No code here',
      purpose: 'transactional',
      enabled: 'on',
    });
    expect(broken.status).toBe(422);
    expect(visibleText(broken.body)).toContain(
      'Text: the OTP service "Templated" sends with this template, which must contain {code} exactly once',
    );

    const deleted = await browser.post(`/console/w/${slug}/otp-templates/spare/delete`, {});
    expect(deleted.status).toBe(303);
    const after = await browser.get(deleted.location ?? '');
    expect(visibleText(after.body)).toContain('The template was deleted.');
    expect(visibleText(after.body)).not.toContain('Spare code');
    const rows = await server.sql<{ slug: string }[]>`
      select t.slug from message_templates t join workspaces w on w.id = t.workspace_id
      where w.slug = ${slug} order by t.slug`;
    expect(rows).toEqual([{ slug: 'login-code' }]);
    expect(await auditActions(slug)).toEqual([
      'template.created',
      'template.created',
      'otp_service.created',
      'template.deleted',
    ]);
  });

  it('refuses a viewer', async () => {
    const { slug } = await signedIn('developer');
    const { browser } = await signedIn('viewer', slug);
    expect((await browser.get(`/console/w/${slug}/otp-templates`)).status).toBe(403);
    const posted = await browser.post(`/console/w/${slug}/otp-templates`, {
      slug: 'sneaky',
      body: 'Code {code}',
    });
    expect(posted.status).toBe(403);
    const [row] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from message_templates t join workspaces w on w.id = t.workspace_id
      where w.slug = ${slug}`;
    expect(row?.count).toBe(0);
  });
});

describe('Sender ids', () => {
  it('registers (own: pending the operator; a workspace provider: approved), lists and deletes', async () => {
    const { slug, browser } = await signedIn('developer');
    await simulatorProvider(slug, 'house');
    const empty = await browser.get(`/console/w/${slug}/otp-senders`);
    expect(visibleText(empty.body)).toContain('No sender ids yet');

    const tooLong = await browser.post(`/console/w/${slug}/otp-senders`, {
      provider: 'own',
      sender: 'x'.repeat(51),
    });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body).toContain(
      '<div class="field-error">Sender id must be at most 50 characters</div>',
    );

    const pending = await browser.post(`/console/w/${slug}/otp-senders`, {
      provider: 'own',
      sender: 'Acme',
    });
    expect(pending.status).toBe(201);
    expect(visibleText(pending.body)).toContain(
      '"Acme" is registered for own and waits for the operator\'s approval.',
    );
    const approved = await browser.post(`/console/w/${slug}/otp-senders`, {
      provider: 'house',
      sender: 'Acme',
    });
    expect(approved.status).toBe(201);
    const again = await browser.post(`/console/w/${slug}/otp-senders`, {
      provider: 'house',
      sender: 'Acme',
    });
    expect(again.status).toBe(409);
    expect(visibleText(again.body)).toContain(
      `Sender id: "Acme" is already registered for house in ${slug}`,
    );
    const listed = visibleText((await browser.get(`/console/w/${slug}/otp-senders`)).body);
    expect(listed).toContain('Acme house Approved');
    expect(listed).toContain('Acme own Pending approval');

    const rows = await server.sql<{ id: number; providerSlug: string; approved: boolean }[]>`
      select s.id, s.provider_slug, s.approved from sender_ids s
      join workspaces w on w.id = s.workspace_id where w.slug = ${slug} order by s.provider_slug`;
    expect(rows.map(({ providerSlug, approved: ok }) => [providerSlug, ok])).toEqual([
      ['house', true],
      ['own', false],
    ]);

    // A service sending from it keeps it; once gone, the sender can be deleted.
    await browser.get(`/console/w/${slug}/otp-services`);
    const service = await browser.post(`/console/w/${slug}/otp-services`, {
      name: 'Branded',
      purpose: 'login',
      sender_id: 'Acme',
      provider: 'house',
    });
    expect(service.status).toBe(201);
    await browser.get(`/console/w/${slug}/otp-senders`);
    const inUse = await browser.post(`/console/w/${slug}/otp-senders/${rows[0]?.id}/delete`, {});
    expect(inUse.status).toBe(409);
    expect(visibleText(inUse.body)).toContain(
      'The OTP service "Branded" sends from "Acme" through house; change it first',
    );
    const deleted = await browser.post(`/console/w/${slug}/otp-senders/${rows[1]?.id}/delete`, {});
    expect(deleted.status).toBe(303);
    const [left] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from sender_ids where id = ${rows[1]?.id ?? 0}`;
    expect(left?.count).toBe(0);
    expect(await auditActions(slug)).toEqual([
      'sender.registered',
      'sender.registered',
      'otp_service.created',
      'sender.deleted',
    ]);
  });

  it("does not delete another workspace's sender, and refuses a viewer", async () => {
    const theirs = await signedIn('developer');
    await theirs.browser.get(`/console/w/${theirs.slug}/otp-senders`);
    await theirs.browser.post(`/console/w/${theirs.slug}/otp-senders`, {
      provider: 'own',
      sender: 'Theirs',
    });
    const [sender] = await server.sql<{ id: number }[]>`
      select s.id from sender_ids s join workspaces w on w.id = s.workspace_id
      where w.slug = ${theirs.slug}`;
    const mine = await signedIn('developer');
    await mine.browser.get(`/console/w/${mine.slug}/otp-senders`);
    const foreign = await mine.browser.post(
      `/console/w/${mine.slug}/otp-senders/${sender?.id}/delete`,
      {},
    );
    expect(foreign.status).toBe(404);
    expect(visibleText(foreign.body)).toContain(`${mine.slug} has no sender id ${sender?.id}`);

    const viewer = await signedIn('viewer', theirs.slug);
    expect((await viewer.browser.get(`/console/w/${theirs.slug}/otp-senders`)).status).toBe(403);
    const refused = await viewer.browser.post(
      `/console/w/${theirs.slug}/otp-senders/${sender?.id}/delete`,
      {},
    );
    expect(refused.status).toBe(403);
    const [kept] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from sender_ids where id = ${sender?.id ?? 0}`;
    expect(kept?.count).toBe(1);
  });
});

/**
 * Workspace → Fraud guard in the console: the settings in force (defaults marked), a change saved
 * with the `herald guard set` rules (a refusal shown at its field) and audited, an OTP service's
 * own settings; a range the breaker blocked (OTP sends over REST) listed with Unblock, which lifts
 * it, and the banner every page shows meanwhile; the refusals chart and totals; members without
 * the permission or role refused.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setGuard, showGuard } from '../../commands/fraud-guard/settings.js';
import { addCredits } from '../../commands/otp/credits.js';
import { createOtpService } from '../../commands/otp/services.js';
import { createApiKey } from '../../commands/team/api-keys.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';
/** Refusals are counted after their answer (commands/fraud-guard/send-checks.ts countRefusal). */
const POLL = { timeout: 10_000, interval: 100 };

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

async function workspace() {
  const slug = `g-${randomBytes(5).toString('hex')}`;
  const { id } = await createWorkspace(server.deps, { name: `Guard ${slug}`, slug }, TEST_OPERATOR);
  return { slug, id };
}

async function signedIn(slug: string, role: 'admin' | 'developer' | 'viewer') {
  const email = `${role}@${slug}.test`;
  await addUser(server.deps, { workspace: slug, email, password: PASSWORD, role }, TEST_OPERATOR);
  const browser = new ConsoleBrowser(server.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return { email, browser };
}

/** The effective settings table's row of a setting: its label, value and where it comes from. */
const settingRow = (html: string, name: string) =>
  visibleText(new RegExp(`<tr id="setting-${name}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '');
const fieldError = (html: string) =>
  visibleText(/<div class="field-error">([^<]*)<\/div>/.exec(html)?.[1] ?? '');
const banner = (html: string) =>
  visibleText(
    /<div class="alert warn" id="paused-ranges"[^>]*>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '',
  );

const auditOf = (workspaceId: number, action: string) =>
  server.sql<{ actor: string; source: string; target: string; details: unknown }[]>`
    select actor, source, target, details from audit_log
    where workspace_id = ${workspaceId} and action = ${action} order by id`;

describe('the settings', () => {
  it('shows the defaults in force, each marked as the default', async () => {
    const { slug } = await workspace();
    const { browser } = await signedIn(slug, 'admin');
    const page = await browser.get(`/console/w/${slug}/fraud-guard`);
    expect(page.status).toBe(200);
    expect(settingRow(page.body, 'otp_per_recipient')).toBe(
      'OTP per recipient 5/15m,10/24h default',
    );
    expect(settingRow(page.body, 'otp_countries')).toBe('OTP countries any default');
    expect(settingRow(page.body, 'block_prefix')).toBe('Blocked prefixes default default');
    expect(settingRow(page.body, 'range_breaker')).toBe('Range breaker 20/1h@10%,1h default');
    expect(settingRow(page.body, 'daily_segments')).toBe('Daily segments none default');
    expect(settingRow(page.body, 'cap_near_percent')).toBe('Cap-near percent 80 default');
    expect(settingRow(page.body, 'key_rate')).toBe('API key rate 100/s default');
    expect(settingRow(page.body, 'workspace_rate')).toBe('Workspace rate 300/s default');
    expect(visibleText(page.body)).toContain('No number range is blocked.');
    // The sidebar's Workspace section links the page.
    expect(page.body).toContain(
      `<a href="/console/w/${slug}/fraud-guard" aria-current="page">Fraud guard</a>`,
    );
  });

  it('saves the settings changed, keeps the others inherited, and audits the change', async () => {
    const { slug, id } = await workspace();
    const { email, browser } = await signedIn(slug, 'admin');
    await browser.get(`/console/w/${slug}/fraud-guard`);
    const saved = await browser.post(`/console/w/${slug}/fraud-guard`, {
      otp_per_recipient: '3/15m',
      otp_countries: '',
      sms_countries: 'au, nz',
      block_prefix: '',
      range_breaker: '',
      daily_segments: '5000',
      cap_near_percent: '',
      key_rate: '',
      workspace_rate: '',
    });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/console/w/${slug}/fraud-guard?done=saved`);
    const view = await showGuard(server.deps, { workspace: slug });
    expect(view.own.sort()).toEqual(['dailySegments', 'otpPerRecipient', 'smsCountries']);
    const page = await browser.get(saved.location as string);
    expect(visibleText(page.body)).toContain('The fraud guard settings were saved.');
    expect(settingRow(page.body, 'otp_per_recipient')).toBe('OTP per recipient 3/15m set here');
    expect(settingRow(page.body, 'sms_countries')).toBe('SMS countries AU,NZ set here');
    expect(settingRow(page.body, 'otp_countries')).toBe('OTP countries any default');
    expect(settingRow(page.body, 'daily_segments')).toBe(
      'Daily segments 5000 (0 used today) set here',
    );
    expect(await auditOf(id, 'guard.updated')).toEqual([
      {
        actor: email,
        source: 'console',
        target: `workspace ${slug}`,
        details: { otp_per_recipient: '3/15m', sms_countries: 'au, nz', daily_segments: '5000' },
      },
    ]);
    // A setting cleared goes back to the default; one posted as shown is not a change.
    const cleared = await browser.post(`/console/w/${slug}/fraud-guard`, {
      otp_per_recipient: '3/15m',
      sms_countries: 'AU,NZ',
      daily_segments: '',
    });
    expect(cleared.status).toBe(303);
    expect((await showGuard(server.deps, { workspace: slug })).own.sort()).toEqual([
      'otpPerRecipient',
      'smsCountries',
    ]);
    expect((await auditOf(id, 'guard.updated')).at(-1)?.details).toEqual({
      daily_segments: 'inherit',
    });
  });

  it('shows a refused value under its field with the exact message, and saves nothing', async () => {
    const { slug, id } = await workspace();
    const { browser } = await signedIn(slug, 'admin');
    await browser.get(`/console/w/${slug}/fraud-guard`);
    const refused = await browser.post(`/console/w/${slug}/fraud-guard`, {
      otp_per_recipient: '3/15m',
      range_breaker: '20/1h',
    });
    expect(refused.status).toBe(422);
    expect(fieldError(refused.body)).toBe(
      'Range breaker "20/1h" must be sends/window@percent%,cool-down, like 20/1h@10%,1h, or off, or inherit',
    );
    expect(refused.body).toMatch(
      /<input id="guard-range_breaker" name="range_breaker" type="text" value="20\/1h"/,
    );
    expect((await showGuard(server.deps, { workspace: slug })).own).toEqual([]);
    expect(await auditOf(id, 'guard.updated')).toEqual([]);
  });

  it("sets an OTP service's own limit, its workspace's settings shown as inherited", async () => {
    const { slug, id } = await workspace();
    const { service } = await createOtpService(
      server.deps,
      {
        workspace: slug,
        name: 'Sign-in',
        purpose: 'login',
      },
      TEST_OPERATOR,
    );
    await setGuard(server.deps, { workspace: slug, rangeBreaker: '50/1h@5%,2h' }, TEST_OPERATOR);
    const { email, browser } = await signedIn(slug, 'admin');
    const page = await browser.get(`/console/w/${slug}/fraud-guard?otp_service=${service.slug}`);
    expect(page.status).toBe(200);
    expect(settingRow(page.body, 'range_breaker')).toBe("Range breaker 50/1h@5%,2h workspace's");
    expect(settingRow(page.body, 'key_rate')).toBe('');
    const saved = await browser.post(`/console/w/${slug}/fraud-guard`, {
      otp_service: service.slug,
      otp_per_recipient: '2/15m',
    });
    expect(saved.location).toBe(
      `/console/w/${slug}/fraud-guard?done=saved&otp_service=${service.slug}`,
    );
    const view = await showGuard(server.deps, { workspace: slug, otpService: service.slug });
    expect(view.own).toEqual(['otpPerRecipient']);
    expect((await showGuard(server.deps, { workspace: slug })).own).toEqual(['rangeBreaker']);
    expect((await auditOf(id, 'guard.updated')).at(-1)).toEqual({
      actor: email,
      source: 'console',
      target: `OTP service ${service.slug}`,
      details: { otp_per_recipient: '2/15m' },
    });
    // A service deleted since the page was drawn: the workspace's page, saying so; nothing saved.
    const gone = crypto.randomUUID();
    const linesBefore = (await auditOf(id, 'guard.updated')).length;
    const refused = await browser.post(`/console/w/${slug}/fraud-guard`, {
      otp_service: gone,
      otp_per_recipient: '3/15m',
    });
    expect(refused.status).toBe(404);
    expect(visibleText(refused.body)).toContain(
      `OTP service "${gone}" is not an OTP service of ${slug}`,
    );
    expect((await auditOf(id, 'guard.updated')).length).toBe(linesBefore);
  });

  it('refuses a member without developer_tools.read the page, and a developer the changes', async () => {
    const { slug } = await workspace();
    const viewer = await signedIn(slug, 'viewer');
    const refused = await viewer.browser.get(`/console/w/${slug}/fraud-guard`);
    expect(refused.status).toBe(403);
    expect(visibleText(/<p>([^<]*)<\/p>/.exec(refused.body)?.[1] ?? '')).toBe(
      'This needs the developer_tools.read permission in this workspace. Ask an owner or admin of the workspace if you need it.',
    );
    expect(refused.body).not.toContain('>Fraud guard</a>');
    const developer = await signedIn(slug, 'developer');
    const page = await developer.browser.get(`/console/w/${slug}/fraud-guard`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('name="otp_per_recipient"');
    const change = await developer.browser.post(`/console/w/${slug}/fraud-guard`, {
      otp_per_recipient: 'off',
    });
    expect(change.status).toBe(403);
    expect(visibleText(/<p>([^<]*)<\/p>/.exec(change.body)?.[1] ?? '')).toBe(
      'This needs the developer_tools.read permission and the owner or admin role in this workspace. Ask an owner or admin of the workspace if you need it.',
    );
    expect((await showGuard(server.deps, { workspace: slug })).own).toEqual([]);
  });
});

describe('blocked ranges', () => {
  /** A workspace whose breaker blocks a range after 3 unverified codes, with one range blocked. */
  async function blockedRange() {
    const tenant = await workspace();
    await addCredits(server.deps, { workspace: tenant.slug, amount: 100 }, TEST_OPERATOR);
    const { token } = await createApiKey(
      server.deps,
      {
        workspace: tenant.slug,
        abilities: ['otp:send'],
      },
      TEST_OPERATOR,
    );
    await setGuard(
      server.deps,
      {
        workspace: tenant.slug,
        otpPerRecipient: 'off',
        rangeBreaker: '3/1h@50%,1h',
      },
      TEST_OPERATOR,
    );
    // +61475RR, then 4 digits: a prefix no other test file draws from.
    const range = `+61475${randomInt(10, 100)}`;
    const send = (number: number) =>
      server.app.inject({
        method: 'POST',
        url: '/api/v1/otp/send',
        headers: { authorization: `Bearer ${token}` },
        payload: { recipient: `${range}000${number}`, purpose: 'login' },
      });
    for (let number = 1; number <= 3; number++) expect((await send(number)).statusCode).toBe(202);
    expect((await send(4)).statusCode).toBe(429);
    return { ...tenant, range };
  }

  it('lists the range with Unblock, which lifts it; the banner shows on every page meanwhile', async () => {
    const { slug, id, range } = await blockedRange();
    const { email, browser } = await signedIn(slug, 'admin');
    const page = await browser.get(`/console/w/${slug}/fraud-guard`);
    const row = visibleText(
      new RegExp(`<tr id="range-\\${range}">([\\s\\S]*?)</tr>`).exec(page.body)?.[1] ?? '',
    );
    expect(row).toMatch(
      new RegExp(
        `^\\${range} \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC 3 0 Unblock$`,
      ),
    );
    expect(page.body).toContain(`name="range" value="${range}"`);
    for (const path of ['', '/developer/api-keys', '/team', '/fraud-guard']) {
      const shown = await browser.get(`/console/w/${slug}${path}`);
      expect(banner(shown.body)).toMatch(
        new RegExp(
          `^Codes to numbers starting \\${range} are paused until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\. Review or unblock$`,
        ),
      );
    }
    expect((await browser.get(`/console/w/${slug}`)).body).toContain(
      `<a href="/console/w/${slug}/fraud-guard">Review or unblock</a>`,
    );

    const unblocked = await browser.post(`/console/w/${slug}/fraud-guard/unblock`, { range });
    expect(unblocked.status).toBe(303);
    expect(unblocked.location).toBe(`/console/w/${slug}/fraud-guard?done=unblocked`);
    const [block] = await server.sql<{ liftedBy: string }[]>`
      select lifted_by from guard_blocked_ranges where workspace_id = ${id} and range = ${range}`;
    expect(block?.liftedBy).toBe(email);
    expect(await auditOf(id, 'guard.range_unblocked')).toEqual([
      { actor: email, source: 'console', target: `range ${range}`, details: { range } },
    ]);
    const after = await browser.get(unblocked.location as string);
    expect(visibleText(after.body)).toContain(
      'The range was unblocked: codes to its numbers are sent again, its sends counted afresh.',
    );
    expect(visibleText(after.body)).toContain('No number range is blocked.');
    expect(after.body).not.toContain('id="paused-ranges"');
    expect((await browser.get(`/console/w/${slug}/team`)).body).not.toContain('id="paused-ranges"');

    // A range no longer blocked: the page says so, at the form.
    const again = await browser.post(`/console/w/${slug}/fraud-guard/unblock`, { range });
    expect(again.status).toBe(404);
    expect(visibleText(again.body)).toContain(`Range "${range}" is not blocked in ${slug}`);
  });

  it('shows the banner without the link to a member who may not open the page, and refuses them Unblock', async () => {
    const { slug, range } = await blockedRange();
    const viewer = await signedIn(slug, 'viewer');
    const dashboard = await viewer.browser.get(`/console/w/${slug}`);
    expect(banner(dashboard.body)).toMatch(
      new RegExp(`^Codes to numbers starting \\${range} are paused until .* UTC\\.$`),
    );
    const developer = await signedIn(slug, 'developer');
    await developer.browser.get(`/console/w/${slug}/fraud-guard`);
    const refused = await developer.browser.post(`/console/w/${slug}/fraud-guard/unblock`, {
      range,
    });
    expect(refused.status).toBe(403);
    expect((await showGuard(server.deps, { workspace: slug })).blockedRanges).toHaveLength(1);
  });

  it('charts the last 30 days of refusals by rule, with each rule’s total', async () => {
    const { slug, id } = await blockedRange();
    await server.sql`
      insert into guard_refusals (workspace_id, day, rule, refusals)
      values (${id}, (now() at time zone 'UTC')::date - 3, 'otp_country', 7),
        (${id}, (now() at time zone 'UTC')::date - 40, 'otp_country', 1000)`;
    const { browser } = await signedIn(slug, 'admin');
    await expect
      .poll(async () => {
        const page = await browser.get(`/console/w/${slug}/fraud-guard`);
        return visibleText(
          /<tr id="refusals-range_breaker">([\s\S]*?)<\/tr>/.exec(page.body)?.[1] ?? '',
        );
      }, POLL)
      .toBe('Range breaker 1');
    const page = await browser.get(`/console/w/${slug}/fraud-guard`);
    expect(
      visibleText(/<tr id="refusals-otp_country">([\s\S]*?)<\/tr>/.exec(page.body)?.[1] ?? ''),
    ).toBe('OTP country 7');
    expect(
      visibleText(/<tr id="refusals-key_rate">([\s\S]*?)<\/tr>/.exec(page.body)?.[1] ?? ''),
    ).toBe('API key rate 0');
    const series = JSON.parse(
      (/<div class="chart" data-series="([^"]*)"/.exec(page.body)?.[1] ?? '{}').replaceAll(
        '&quot;',
        '"',
      ),
    ) as { days: number[]; lines: { label: string; values: number[] }[] };
    expect(series.days).toHaveLength(30);
    const today = Math.floor(Date.now() / 86_400_000) * 86_400;
    expect(series.days.at(-1)).toBe(today);
    expect(series.days[0]).toBe(today - 29 * 86_400);
    const line = (label: string) =>
      series.lines.find((candidate) => candidate.label === label)?.values;
    expect(line('Range breaker')).toEqual([...Array(29).fill(0), 1]);
    expect(line('OTP country')).toEqual([...Array(26).fill(0), 7, 0, 0, 0]);
    expect(series.lines.map((candidate) => candidate.label)).toEqual([
      'OTP per recipient',
      'OTP country',
      'SMS country',
      'Blocked prefix',
      'Range breaker',
      'Daily cap',
      'API key rate',
      'Workspace rate',
    ]);
  });
});

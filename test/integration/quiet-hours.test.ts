/**
 * Quiet hours for marketing on the real stack (issue 27, item 6): a workspace's window, in each
 * recipient's local time (zone from the number's country), holds marketing messages outside it
 * on the campaign run's durable timer until it opens; transactional messages are never held; a
 * cancel ends a run asleep on the timer. Numbers in Australia (Perth, UTC+8) and France (Paris,
 * UTC+1 or +2), with a window starting at Paris's next minute: open in Perth, closed in Paris.
 */
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { workspaceUpdate } from '../../cli/admin/workspaces.js';
import { UsageError } from '../../cli/output.js';
import { addUser } from '../../commands/team/users.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, visibleText } from '../support/console.js';
import { dispatchPrepared, inbox, lookup, messageRows, postMessages } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');
const MINUTE_MS = 60_000;

let stack: Stack;

beforeAll(async () => {
  stack = await openStack();
});

afterAll(() => stack.close());

const issued = new Set<string>();
/** Distinct valid mobiles: `prefix` then `digits` random digits (no other test file uses these). */
function drawn(prefix: string, digits: number, count: number): string[] {
  const result: string[] = [];
  while (result.length < count) {
    const number = `${prefix}${String(randomInt(10 ** digits)).padStart(digits, '0')}`;
    if (issued.has(number)) continue;
    issued.add(number);
    result.push(number);
  }
  return result;
}
const australian = (count: number) => drawn('+61489', 6, count);
const french = (count: number) => drawn('+3376', 7, count);

/** Minutes after midnight on a clock in `zone` at `at`. */
function minuteOfDay(at: Date, zone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      hour: 'numeric',
      minute: 'numeric',
    })
      .formatToParts(at)
      .map(({ type, value }) => [type, Number(value)]),
  );
  return (parts.hour as number) * 60 + (parts.minute as number);
}

const clock = (minutes: number) => {
  const wrapped = ((minutes % 1440) + 1440) % 1440;
  return `${String(Math.floor(wrapped / 60)).padStart(2, '0')}:${String(wrapped % 60).padStart(2, '0')}`;
};

/**
 * A window opening `minutesAhead` minutes after the current minute in Paris, 8 hours long: Perth,
 * 6 or 7 hours ahead of Paris, is inside it. Starts early in a minute, so the test has time to look
 * before the window opens.
 */
async function windowOpeningInParis(minutesAhead: number) {
  if (Date.now() % MINUTE_MS > 35_000) await sleep(MINUTE_MS - (Date.now() % MINUTE_MS) + 500);
  const now = new Date();
  const start = minuteOfDay(now, 'Europe/Paris') + minutesAhead;
  const window = `${clock(start)}-${clock(start + 8 * 60)}`;
  const opensAt = new Date((Math.floor(now.getTime() / MINUTE_MS) + minutesAhead) * MINUTE_MS);
  return { window, opensAt };
}

async function setQuietHours(tenant: Tenant, window: string) {
  const updated = await workspaceUpdate(stack.admin, { slug: tenant.slug, 'quiet-hours': window });
  expect((updated.json as { quiet_hours: string | null }).quiet_hours).toBe(window);
}

async function send(tenant: Tenant, recipients: string[], message: string, purpose: string) {
  const response = await postMessages(stack, tenant.token, {
    recipients,
    message,
    message_purpose: purpose,
  });
  expect(response.statusCode).toBe(202);
  return response.json().data.message.id as number;
}

async function heldUntil(campaignId: number) {
  const rows = await stack.sql<{ recipient: string; heldUntil: Date | null }[]>`
    select recipient, held_until from campaign_messages
    where campaign_id = ${campaignId} and status = 'queued' order by seq`;
  return rows;
}

const bodiesAt = async (number: string) =>
  (await inbox(simulatorUrl, number)).map((message) => message.body);

describe('the quiet hours setting', () => {
  it('is set and removed with herald workspace update --quiet-hours, and refuses a bad window', async () => {
    const tenant = await createTenant(stack.admin);
    const [before] = await stack.sql`
      select quiet_hours_start, quiet_hours_end from workspaces where id = ${tenant.workspaceId}`;
    expect(before).toEqual({ quietHoursStart: null, quietHoursEnd: null });
    await setQuietHours(tenant, '09:00-20:00');
    const [set] = await stack.sql`
      select quiet_hours_start, quiet_hours_end from workspaces where id = ${tenant.workspaceId}`;
    expect(set).toEqual({ quietHoursStart: 540, quietHoursEnd: 1200 });
    // Another change keeps the window and shows it.
    const renamed = await workspaceUpdate(stack.admin, { slug: tenant.slug, name: 'Renamed' });
    expect((renamed.json as { quiet_hours: string }).quiet_hours).toBe('09:00-20:00');
    expect(renamed.human).toContain('quiet hours 09:00-20:00');
    for (const bad of ['9-17', '09:00-09:00', '09:00-24:00', 'always']) {
      await expect(
        workspaceUpdate(stack.admin, { slug: tenant.slug, 'quiet-hours': bad }),
      ).rejects.toThrow(
        new UsageError(
          '--quiet-hours must be a window of two 24-hour times, HH:MM-HH:MM (for example 09:00-20:00), or off',
        ),
      );
    }
    const off = await workspaceUpdate(stack.admin, { slug: tenant.slug, 'quiet-hours': 'off' });
    expect((off.json as { quiet_hours: string | null }).quiet_hours).toBeNull();
    expect(off.human).toContain('quiet hours off');
  });
});

describe("the console's Settings page", () => {
  it('lets an owner set and remove quiet hours, audited, refuses an empty window inline, and is not offered to a developer', async () => {
    const tenant = await createTenant(stack.admin);
    const owner = `owner@${tenant.slug}.test`;
    await addUser(
      stack.admin,
      {
        workspace: tenant.slug,
        email: owner,
        password: 'correct horse 1',
        role: 'owner',
      },
      TEST_OPERATOR,
    );
    const developer = new ConsoleBrowser(stack.app);
    expect((await developer.signIn(`dev@${tenant.slug}.test`, 'correct horse 1')).status).toBe(303);
    const base = `/console/w/${tenant.slug}`;
    expect((await developer.get(`${base}/campaigns`)).body).not.toContain(
      `href="${base}/settings"`,
    );
    expect((await developer.get(`${base}/settings`)).status).toBe(403);

    const browser = new ConsoleBrowser(stack.app);
    expect((await browser.signIn(owner, 'correct horse 1')).status).toBe(303);
    const form = await browser.get(`${base}/settings`);
    expect(form.status).toBe(200);
    expect(form.body).toContain(`href="${base}/settings"`);
    expect(form.body).toContain('name="enabled" value="on">');
    expect(form.body).toContain('name="start" type="time" value="09:00"');

    const saved = await browser.post(`${base}/settings/quiet-hours`, {
      enabled: 'on',
      start: '08:30',
      end: '21:00',
    });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`${base}/settings?done=saved`);
    const [row] = await stack.sql`
      select quiet_hours_start, quiet_hours_end from workspaces where id = ${tenant.workspaceId}`;
    expect(row).toEqual({ quietHoursStart: 510, quietHoursEnd: 1260 });
    const shown = await browser.get(saved.location as string);
    expect(shown.body).toContain('name="enabled" value="on" checked>');
    expect(shown.body).toContain('name="end" type="time" value="21:00"');

    const refused = await browser.post(`${base}/settings/quiet-hours`, {
      enabled: 'on',
      start: '10:00',
      end: '10:00',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain(
      '<div class="field-error">Quiet hours must be a window of two 24-hour times, HH:MM-HH:MM (for example 09:00-20:00), or off</div>',
    );

    const off = await browser.post(`${base}/settings/quiet-hours`, {
      start: '08:30',
      end: '21:00',
    });
    expect(off.location).toBe(`${base}/settings?done=off`);
    const audited = await stack.sql<
      { actor: string; action: string; target: string; details: unknown }[]
    >`
      select actor, action, target, details from audit_log
      where workspace_id = ${tenant.workspaceId} and action = 'workspace.updated' order by id`;
    expect(audited).toEqual([
      {
        actor: owner,
        action: 'workspace.updated',
        target: `workspace ${tenant.slug}`,
        details: { quiet_hours: '08:30-21:00' },
      },
      {
        actor: owner,
        action: 'workspace.updated',
        target: `workspace ${tenant.slug}`,
        details: { quiet_hours: 'off' },
      },
    ]);
  });
});

describe('a marketing campaign in quiet hours', () => {
  it('sends to numbers inside their window now, holds the others until it opens there, and never holds transactional messages', {
    timeout: 150_000,
  }, async () => {
    const tenant = await createTenant(stack.admin);
    const [perth1, perth2] = australian(2) as [string, string];
    const [paris1, paris2] = french(2) as [string, string];
    const { window, opensAt } = await windowOpeningInParis(1);
    await setQuietHours(tenant, window);

    const marketing = await send(
      tenant,
      [perth1, paris1, perth2, paris2],
      'Spring sale: 20% off today',
      'marketing',
    );
    await expect
      .poll(async () => (await lookup(stack, tenant.token, marketing)).sent_count, {
        timeout: 20_000,
        interval: 200,
      })
      .toBe(2);
    expect(await bodiesAt(perth1)).toEqual(['Spring sale: 20% off today']);
    expect(await bodiesAt(perth2)).toEqual(['Spring sale: 20% off today']);
    expect(await heldUntil(marketing)).toEqual([
      { recipient: paris1, heldUntil: opensAt },
      { recipient: paris2, heldUntil: opensAt },
    ]);
    expect(await lookup(stack, tenant.token, marketing)).toMatchObject({
      status: 'queued',
      total_recipients: 4,
      queued_count: 2,
      sent_count: 2,
      failed_count: 0,
      completed_at: null,
    });

    // The batch page says how many wait.
    const browser = new ConsoleBrowser(stack.app);
    expect((await browser.signIn(`dev@${tenant.slug}.test`, 'correct horse 1')).status).toBe(303);
    const page = await browser.get(`/console/w/${tenant.slug}/batches/${marketing}`);
    expect(page.status).toBe(200);
    expect(visibleText(page.body)).toContain('2 waiting for quiet hours to end');

    // A transactional campaign to the same numbers goes at once, to all four.
    const transactional = await send(
      tenant,
      [perth1, paris1, perth2, paris2],
      'Your order has shipped',
      'transactional',
    );
    await expect
      .poll(async () => (await lookup(stack, tenant.token, transactional)).status, {
        timeout: 20_000,
        interval: 200,
      })
      .toBe('completed');
    expect(await lookup(stack, tenant.token, transactional)).toMatchObject({
      sent_count: 4,
      failed_count: 0,
    });
    expect(await bodiesAt(paris1)).toEqual(['Your order has shipped']);
    expect(Date.now()).toBeLessThan(opensAt.getTime());

    // The window opens in Paris: the run's timer fires and the held messages go.
    await expect
      .poll(async () => (await lookup(stack, tenant.token, marketing)).status, {
        timeout: 90_000,
        interval: 500,
      })
      .toBe('completed');
    expect(await lookup(stack, tenant.token, marketing)).toMatchObject({
      queued_count: 0,
      sent_count: 4,
      failed_count: 0,
    });
    for (const number of [paris1, paris2]) {
      const [latest] = await inbox(simulatorUrl, number);
      expect(latest?.body).toBe('Spring sale: 20% off today');
      expect(new Date(latest?.received_at as string).getTime()).toBeGreaterThanOrEqual(
        opensAt.getTime(),
      );
    }
    const waiting = await browser.get(`/console/w/${tenant.slug}/batches/${marketing}`);
    expect(visibleText(waiting.body)).not.toContain('waiting for quiet hours');
  });

  it('fails a held message as expired when its validity ends before its window opens', {
    timeout: 60_000,
  }, async () => {
    const tenant = await createTenant(stack.admin);
    const [number] = french(1) as [string];
    const { window } = await windowOpeningInParis(180);
    await setQuietHours(tenant, window);
    let validUntil = new Date(0);
    const id = await dispatchPrepared(
      stack,
      tenant.workspaceId,
      { body: 'Flash sale', providerSlug: 'own', recipients: [number], purpose: 'marketing' },
      async (campaignId) => {
        const [row] = await stack.sql<{ validUntil: Date }[]>`
          update campaigns set valid_until = date_trunc('second', now()) + interval '6 seconds'
          where id = ${campaignId} returning valid_until`;
        validUntil = row?.validUntil as Date;
      },
    );
    // Held until its validity ends, not until the window opens 3 hours ahead...
    await expect
      .poll(() => heldUntil(id), { timeout: 5_000, interval: 100 })
      .toEqual([{ recipient: number, heldUntil: validUntil }]);
    // ...then woken to fail as expired, never sent.
    await expect
      .poll(async () => (await lookup(stack, tenant.token, id)).status, {
        timeout: 30_000,
        interval: 250,
      })
      .toBe('completed');
    expect(await messageRows(stack, id)).toMatchObject([
      {
        status: 'failed',
        providerSlug: null,
        error: 'validity period ended before it could be submitted',
      },
    ]);
    expect(await inbox(simulatorUrl, number)).toEqual([]);
  });

  it('is canceled while it waits: the held messages become canceled and the sleeping run ends', {
    timeout: 60_000,
  }, async () => {
    const tenant = await createTenant(stack.admin);
    const recipients = french(3);
    const { window } = await windowOpeningInParis(180);
    await setQuietHours(tenant, window);
    const id = await send(tenant, recipients, 'Weekend offer', 'marketing');
    await expect
      .poll(async () => (await heldUntil(id)).filter((row) => row.heldUntil !== null).length, {
        timeout: 20_000,
        interval: 200,
      })
      .toBe(3);

    const canceled = await stack.app.inject({
      method: 'POST',
      url: `/api/v1/messages/${id}/cancel`,
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(canceled.statusCode).toBe(200);
    expect(canceled.json().data.message).toMatchObject({
      status: 'canceled',
      queued_count: 0,
      sent_count: 0,
      canceled_count: 3,
    });
    const [row] = await stack.sql<{ workflowId: string }[]>`
      select workflow_id from campaigns where id = ${id}`;
    const run = stack.temporal.workflow.getHandle(row?.workflowId as string);
    // The lane asleep until the window opens (3 hours ahead) wakes on the cancel and the run ends.
    await expect(
      Promise.race([run.result(), sleep(15_000).then(() => 'still running')]),
    ).resolves.toBeUndefined();
    expect((await run.describe()).status.name).toBe('COMPLETED');
    for (const number of recipients) expect(await inbox(simulatorUrl, number)).toEqual([]);
  });
});

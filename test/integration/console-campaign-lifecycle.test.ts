/**
 * The console's half of a campaign's lifecycle (issue 27): "Send later" on Quick Send and Create
 * campaign (a date and time in a named time zone, stored as the exact instant, refused inline by
 * REST's window rule), the batch page while scheduled, Cancel behind a confirmation page (a
 * scheduled batch sends nothing; a sending one shows what it canceled and what still settles),
 * members who may not send refused, and the Campaigns filter knowing the new statuses.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { insertCampaign } from '../../db/campaigns.js';
import type { Role } from '../../domain/access.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, visibleText } from '../support/console.js';
import { inbox } from '../support/send.js';

type App = Awaited<ReturnType<typeof openConsoleApp>>;
let server: App;
const PASSWORD = 'correct horse 1';
const WINDOW = 'The send at field must be a date between 1 minute and 35 days from now.';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

const issued = new Set<string>();
/** Australian mobiles from +61481, a range no other test file draws from. */
function numbers(count: number): string[] {
  const result: string[] = [];
  while (result.length < count) {
    const number = `+61481${String(randomInt(1_000_000)).padStart(6, '0')}`;
    if (issued.has(number)) continue;
    issued.add(number);
    result.push(number);
  }
  return result;
}

async function workspace() {
  const slug = `l-${randomBytes(5).toString('hex')}`;
  const created = await createWorkspace(
    server.deps,
    { name: `Lifecycle ${slug}`, slug },
    TEST_OPERATOR,
  );
  return {
    slug,
    id: created.id,
    base: `/console/w/${slug}`,
    async member(role: Role) {
      const email = `${role}-${randomBytes(3).toString('hex')}@${slug}.test`;
      await addUser(
        server.deps,
        { workspace: slug, email, password: PASSWORD, role },
        TEST_OPERATOR,
      );
      const browser = new ConsoleBrowser(server.app);
      expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
      return { email, browser };
    },
  };
}

/** A whole minute at least `aheadMs` from now. */
function wholeMinute(aheadMs: number): Date {
  return new Date(Math.ceil((Date.now() + aheadMs) / 60_000) * 60_000);
}

/** `at` as a `datetime-local` field shows it on a clock in `zone`: `YYYY-MM-DDTHH:MM`. */
function localTime(at: Date, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(at)
      .map(({ type, value }) => [type, value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

/** `2026-11-23 14:05 UTC`, as every console page shows a time. */
const shown = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const batchIdOf = (location: string | undefined) =>
  Number(/\/batches\/(\d+)(?:\?|$)/.exec(location ?? '')?.[1]);

async function campaignRow(id: number) {
  const [row] = await server.sql<{ status: string; scheduledAt: Date | null }[]>`
    select status, scheduled_at from campaigns where id = ${id}`;
  return row;
}

async function messageStatuses(id: number) {
  const rows = await server.sql<{ status: string; count: number }[]>`
    select status, count(*)::int from campaign_messages where campaign_id = ${id}
    group by status order by status`;
  return Object.fromEntries(rows.map((row) => [row.status, row.count]));
}

/** The Send later field set with its only error, `message`. */
const sendLaterError = (message: string) =>
  new RegExp(
    `<fieldset class="field invalid" id="[a-z-]*send-later">(?:(?!</fieldset>)[\\s\\S])*<div class="field-error">${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</div>\\s*</fieldset>`,
  );

describe('Send later', () => {
  it('schedules a Quick Send at the time given in its time zone; the batch page shows it scheduled', async () => {
    const space = await workspace();
    const { browser } = await space.member('developer');
    const form = await browser.get(`${space.base}/quick-send`);
    // Without script the zone offered is UTC; console.js then picks the browser's.
    expect(form.body).toContain('name="send_at" type="datetime-local" value=""');
    expect(form.body).toContain('<option value="UTC" selected>UTC</option>');
    expect(form.body).toContain('data-browser-zone="choose"');

    const at = wholeMinute(10 * 60_000);
    const recipients = numbers(2);
    const sent = await browser.post(`${space.base}/quick-send`, {
      recipients: recipients.join('\n'),
      message: 'Your appointment is tomorrow.',
      purpose: 'transactional',
      routing: 'own',
      send_at: localTime(at, 'Australia/Sydney'),
      send_at_zone: 'Australia/Sydney',
    });
    expect(sent.status).toBe(303);
    const id = batchIdOf(sent.location);
    expect(await campaignRow(id)).toEqual({ status: 'scheduled', scheduledAt: at });

    const page = await browser.get(`${space.base}/batches/${id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<span class="badge info" id="batch-status">scheduled</span>');
    expect(page.body).toContain(`<strong id="batch-scheduled">Scheduled for ${shown(at)}</strong>`);
    expect(page.body).toContain(`href="${space.base}/batches/${id}/cancel">Cancel batch…</a>`);
    const list = await browser.get(`${space.base}/campaigns?status=scheduled`);
    expect(list.status).toBe(200);
    expect(list.body).toContain(`data-batch="${id}"`);
    expect(list.body).toContain('<span class="badge info">scheduled</span>');
  });

  it('schedules a named campaign from Create campaign', async () => {
    const space = await workspace();
    const { browser } = await space.member('developer');
    const form = await browser.get(`${space.base}/campaigns/new`);
    expect(form.body).toContain('id="campaign-send-later-at" name="send_at" type="datetime-local"');

    const at = wholeMinute(20 * 60_000);
    const created = await browser.post(`${space.base}/campaigns`, {
      name: 'Evening reminder',
      recipients: numbers(1).join('\n'),
      message: 'See you tonight',
      purpose: 'transactional',
      send_at: localTime(at, 'America/New_York'),
      send_at_zone: 'America/New_York',
    });
    expect(created.status).toBe(303);
    expect(created.location).toMatch(/\/batches\/\d+\?done=scheduled$/);
    const id = batchIdOf(created.location);
    expect(await campaignRow(id)).toEqual({ status: 'scheduled', scheduledAt: at });
    const page = await browser.get(created.location as string);
    const text = visibleText(page.body);
    expect(text).toContain('The campaign was created and is scheduled.');
    expect(text).toContain(`scheduled Scheduled for ${shown(at)}`);
  });

  it('refuses a time too soon, too far or not on the clock, inline at the field, and saves nothing', async () => {
    const space = await workspace();
    const { browser } = await space.member('owner');
    await browser.get(`${space.base}/quick-send`);
    const quickSend = { recipients: numbers(1).join('\n'), message: 'Soon', routing: 'own' };
    const cases: [Record<string, string>, string][] = [
      [{ send_at: localTime(new Date(), 'UTC'), send_at_zone: 'UTC' }, WINDOW],
      [
        { send_at: localTime(new Date(Date.now() + 36 * 86_400_000), 'UTC'), send_at_zone: 'UTC' },
        WINDOW,
      ],
      [
        { send_at: '2030-02-30T10:00', send_at_zone: 'UTC' },
        'Give the date and time as YYYY-MM-DD HH:MM.',
      ],
      [
        { send_at: '2030-01-01T10:00', send_at_zone: 'Mars/Olympus' },
        'Choose the time zone of the date and time.',
      ],
      [
        { send_at: '2030-03-10T02:30', send_at_zone: 'America/New_York' },
        '2030-03-10 02:30 does not occur in America/New_York: the clocks go forward over it.',
      ],
    ];
    for (const [later, message] of cases) {
      const refused = await browser.post(`${space.base}/quick-send`, { ...quickSend, ...later });
      expect({ later, status: refused.status }).toEqual({ later, status: 422 });
      expect(refused.body).toMatch(sendLaterError(message));
      expect(refused.body.match(/class="field-error"/g)).toHaveLength(1);
      // The form comes back as given.
      expect(refused.body).toContain(
        `name="send_at" type="datetime-local" value="${later.send_at}"`,
      );
    }

    await browser.get(`${space.base}/campaigns/new`);
    const refused = await browser.post(`${space.base}/campaigns`, {
      name: 'Too soon',
      recipients: numbers(1).join('\n'),
      message: 'Soon',
      send_at: localTime(new Date(Date.now() + 30_000), 'Europe/London'),
      send_at_zone: 'Europe/London',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatch(sendLaterError(`Send later: ${WINDOW}`));
    expect(refused.body.match(/class="field-error"/g)).toHaveLength(1);

    const [row] = await server.sql<{ count: number }[]>`
      select count(*)::int from campaigns where workspace_id = ${space.id}`;
    expect(row?.count).toBe(0);
  });
});

describe('Cancel', () => {
  it('cancels a scheduled batch after a confirmation page: nothing is sent', async () => {
    const space = await workspace();
    const { email, browser } = await space.member('developer');
    await browser.get(`${space.base}/quick-send`);
    const recipients = numbers(3);
    const at = wholeMinute(65_000);
    const sent = await browser.post(`${space.base}/quick-send`, {
      recipients: recipients.join('\n'),
      message: 'Scheduled, then canceled',
      routing: 'own',
      send_at: localTime(at, 'UTC'),
      send_at_zone: 'UTC',
    });
    expect(sent.status).toBe(303);
    const id = batchIdOf(sent.location);

    const confirm = await browser.get(`${space.base}/batches/${id}/cancel`);
    expect(confirm.status).toBe(200);
    expect(visibleText(confirm.body)).toContain(
      `Cancel batch #${id} · Quick Send #${id}? It is scheduled for ${shown(at)}. Canceled, none of its 3 messages is sent. A cancel cannot be undone. Cancel the batch Keep it`,
    );
    expect(confirm.body).toContain(
      `<form method="post" action="${space.base}/batches/${id}/cancel"`,
    );
    // Opening the confirmation changed nothing.
    expect((await campaignRow(id))?.status).toBe('scheduled');

    // Without the page's token: refused, still scheduled.
    const forged = await browser.post(`${space.base}/batches/${id}/cancel`, { _csrf: null });
    expect(forged.status).toBe(403);
    expect(visibleText(forged.body)).toContain('Request refused');
    expect((await campaignRow(id))?.status).toBe('scheduled');

    const canceled = await browser.post(`${space.base}/batches/${id}/cancel`, {});
    expect(canceled.status).toBe(303);
    expect(canceled.location).toBe(`${space.base}/batches/${id}?done=canceled`);
    expect(await campaignRow(id)).toEqual({ status: 'canceled', scheduledAt: at });
    expect(await messageStatuses(id)).toEqual({ canceled: 3 });

    const page = await browser.get(canceled.location as string);
    expect(visibleText(page.body)).toContain(
      'The batch was canceled: no more of its messages are taken for sending.',
    );
    expect(page.body).toContain('<span class="badge" id="batch-status">canceled</span>');
    expect(page.body).toMatch(/id="count-canceled">3</);
    expect(page.body).toMatch(/id="count-settling">0</);
    expect(page.body).not.toContain('hx-trigger="every 1s"');
    expect(page.body).not.toContain('Cancel batch…');
    // Each recipient shows canceled.
    expect(page.body.match(/<span class="badge">canceled<\/span>/g)).toHaveLength(3);

    // A second cancel answers the same and is not recorded twice.
    await browser.get(`${space.base}/batches/${id}`);
    const again = await browser.post(`${space.base}/batches/${id}/cancel`, {});
    expect(again.location).toBe(`${space.base}/batches/${id}?done=canceled`);
    const entries = await server.sql`
      select actor, action, target, details, source from audit_log
      where workspace_id = ${space.id} and action = 'campaign.canceled'`;
    expect(entries).toEqual([
      {
        actor: email,
        action: 'campaign.canceled',
        target: `campaign #${id}`,
        details: { canceled: 3, settling: 0, sent: 0, failed: 0 },
        source: 'console',
      },
    ]);

    const list = await browser.get(`${space.base}/campaigns?status=canceled`);
    expect(list.body).toContain(`data-batch="${id}"`);
    expect(list.body).toContain('<span class="badge">canceled</span>');
    // Past its time, nothing reached the simulator.
    await new Promise((resolve) => setTimeout(resolve, at.getTime() - Date.now() + 3_000));
    for (const recipient of recipients)
      expect(await inbox(inject('simulatorUrl'), recipient)).toEqual([]);
    expect((await campaignRow(id))?.status).toBe('canceled');
  }, 200_000);

  it('cancels a sending batch: the unclaimed are canceled, the claimed shown settling until they are through', async () => {
    const space = await workspace();
    const { browser } = await space.member('owner');
    // Saved as a send saves one, never dispatched: it stays queued, one message claimed.
    const { id } = await insertCampaign(server.sql, {
      workspaceId: space.id,
      apiKeyId: null,
      source: 'quick_send',
      reference: null,
      purpose: 'transactional',
      body: 'In flight',
      senderId: null,
      routingType: 'direct',
      providerSlug: 'own',
      failoverRouteSlug: null,
      recipients: numbers(4),
    });
    await server.sql`update campaigns set status = 'queued' where id = ${id}`;
    await server.sql`
      update campaign_messages set status = 'sent', submitted_at = now()
      where campaign_id = ${id} and seq = 1`;
    await server.sql`
      update campaign_messages set attempt_started_at = now()
      where campaign_id = ${id} and seq = 2`;

    const confirm = await browser.get(`${space.base}/batches/${id}/cancel`);
    expect(visibleText(confirm.body)).toContain(
      `Cancel batch #${id} · Quick Send #${id}? It is sending: 1 of 4 messages are through. Canceled, no further message is taken for sending; the few already being submitted at that moment still go out and are counted as they settle.`,
    );
    const canceled = await browser.post(`${space.base}/batches/${id}/cancel`, {});
    expect(canceled.status).toBe(303);
    expect(await messageStatuses(id)).toEqual({ canceled: 2, queued: 1, sent: 1 });

    const live = await browser.get(`${space.base}/batches/${id}/live`);
    expect(live.body).toContain('data-status="canceled"');
    expect(live.body).toMatch(
      /id="batch-canceled">canceled \d{4}-\d\d-\d\d \d\d:\d\d UTC: 2 not sent, 1 already being submitted still settling</,
    );
    expect(live.body).toMatch(/id="count-canceled">2</);
    expect(live.body).toMatch(/id="count-settling">1</);
    // Still settling: the counters keep updating.
    expect(live.body).toContain('hx-trigger="every 1s"');

    await server.sql`
      update campaign_messages set status = 'sent', submitted_at = now()
      where campaign_id = ${id} and seq = 2`;
    // Issue 31: sent messages awaiting their receipts keep the counters updating too.
    expect((await browser.get(`${space.base}/batches/${id}/live`)).body).toContain(
      'hx-trigger="every 1s"',
    );
    await server.sql`
      update campaign_messages set delivery_status = 'delivered', delivered_at = now()
      where campaign_id = ${id} and seq in (1, 2)`;
    const settled = await browser.get(`${space.base}/batches/${id}/live`);
    expect(settled.body).toMatch(/id="count-settling">0</);
    expect(settled.body).toMatch(/id="count-sent">2</);
    expect(settled.body).not.toContain('hx-trigger="every 1s"');
  });

  it('answers a completed batch 409 and another workspace’s 404; nothing changes', async () => {
    const space = await workspace();
    const { browser } = await space.member('owner');
    const { id } = await insertCampaign(server.sql, {
      workspaceId: space.id,
      apiKeyId: null,
      source: 'api',
      reference: null,
      purpose: 'transactional',
      body: 'Done',
      senderId: null,
      routingType: 'direct',
      providerSlug: 'own',
      failoverRouteSlug: null,
      recipients: numbers(1),
    });
    await server.sql`update campaign_messages set status = 'sent' where campaign_id = ${id}`;
    await server.sql`update campaigns set status = 'completed', completed_at = now() where id = ${id}`;

    const page = await browser.get(`${space.base}/batches/${id}`);
    expect(page.body).not.toContain('Cancel batch…');
    // The confirmation of a batch with nothing to cancel is its page.
    const confirm = await browser.get(`${space.base}/batches/${id}/cancel`);
    expect(confirm.status).toBe(303);
    expect(confirm.location).toBe(`${space.base}/batches/${id}`);
    const refused = await browser.post(`${space.base}/batches/${id}/cancel`, {});
    expect(refused.status).toBe(409);
    expect(visibleText(refused.body)).toContain(
      `Already completed Batch #${id} has already completed: every message was sent or failed, so there is nothing to cancel.`,
    );
    expect((await campaignRow(id))?.status).toBe('completed');

    const other = await workspace();
    const { browser: stranger } = await other.member('owner');
    await stranger.get(`${other.base}/campaigns`);
    const hidden = await stranger.post(`${other.base}/batches/${id}/cancel`, {});
    expect(hidden.status).toBe(404);
    expect(visibleText(hidden.body)).toContain('This workspace has no batch with that number.');
  });

  it('refuses a member who may not send: no button, the confirmation and the cancel 403', async () => {
    const space = await workspace();
    const { browser: owner } = await space.member('owner');
    await owner.get(`${space.base}/quick-send`);
    const sent = await owner.post(`${space.base}/quick-send`, {
      recipients: numbers(1).join('\n'),
      message: 'Not yours to stop',
      routing: 'own',
      send_at: localTime(wholeMinute(30 * 60_000), 'UTC'),
      send_at_zone: 'UTC',
    });
    const id = batchIdOf(sent.location);

    const { browser: viewer } = await space.member('viewer');
    const page = await viewer.get(`${space.base}/batches/${id}`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('Cancel batch…');
    const refusal =
      'Not allowed This needs the campaigns.read permission and the owner or admin or developer role in this workspace. Ask an owner or admin of the workspace if you need it.';
    const confirm = await viewer.get(`${space.base}/batches/${id}/cancel`);
    expect(confirm.status).toBe(403);
    expect(visibleText(confirm.body)).toContain(refusal);
    const refused = await viewer.post(`${space.base}/batches/${id}/cancel`, {});
    expect(refused.status).toBe(403);
    expect(visibleText(refused.body)).toContain(refusal);
    expect((await campaignRow(id))?.status).toBe('scheduled');
  });
});

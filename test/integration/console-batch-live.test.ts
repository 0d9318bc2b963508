/**
 * Issue 31 items 2, 3 and 7 on the console's batch pages, the dashboard and the campaign list:
 * figures and recipient rows keep updating after `completed` while receipts are awaited inside
 * the validity window; "Delivery rate –" until something was sent; provider error texts masked
 * like numbers for a member without recipients.read; failures grouped by error code, in words,
 * with one masked example; the delivery breakdown bar and the dashboard's stacked daily bars.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { insertCampaign } from '../../db/campaigns.js';
import type { Role } from '../../domain/access.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, openConsoleApp, type Page, visibleText } from '../support/console.js';

let server: Awaited<ReturnType<typeof openConsoleApp>>;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  server = await openConsoleApp();
});
afterAll(() => server.close());

/** The issue's own number and its neighbours, under +61412555 (no other test file uses it). */
const THE_NUMBER = '+61412555011';
const numbers = (count: number) =>
  Array.from({ length: count }, (_, index) => `+61412555${String(11 + index).padStart(3, '0')}`);

async function workspace() {
  const slug = `l-${randomBytes(5).toString('hex')}`;
  const { id } = await createWorkspace(server.deps, { name: `Live ${slug}`, slug }, TEST_OPERATOR);
  return {
    id,
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
      return browser;
    },
  };
}

/** A batch saved as the sends save one (never dispatched), marked `completed` with every message sent. */
async function completedBatch(workspaceId: number, recipients: string[]): Promise<number> {
  const { id } = await insertCampaign(server.sql, {
    workspaceId,
    apiKeyId: null,
    source: 'quick_send',
    reference: null,
    purpose: 'transactional',
    body: 'Live',
    senderId: null,
    routingType: 'direct',
    providerSlug: 'own',
    failoverRouteSlug: null,
    recipients,
  });
  await server.sql`
    update campaign_messages set status = 'sent', provider_slug = 'own', submitted_at = now()
    where campaign_id = ${id}`;
  await server.sql`update campaigns set status = 'completed', completed_at = now() where id = ${id}`;
  return id;
}

const text = (page: Page, id: string) =>
  visibleText(new RegExp(`id="${id}">([^<]*)<`).exec(page.body)?.[1] ?? '');

/** The recipients table's rows: position, number, status and error. */
const recipientRows = (page: Page) =>
  [
    ...(/<table id="recipients">[\s\S]*?<\/table>/.exec(page.body)?.[0] ?? '').matchAll(
      /<tr>\s*<td class="num">(\d+)<\/td>\s*<td class="mono">([^<]*)<\/td>\s*<td>([\s\S]*?)<\/td>\s*<td class="hide-phone mono">([^<]*)<\/td>/g,
    ),
  ].map((m) => [Number(m[1]), m[2], visibleText(m[3] ?? ''), visibleText(m[4] ?? '')]);

const failuresTable = (page: Page) =>
  visibleText(/<table id="failures">[\s\S]*?<\/table>/.exec(page.body)?.[0] ?? '');

describe('Live while receipts are awaited', () => {
  it('keeps the fragment polling after completed until the receipts arrive, rows included', async () => {
    const space = await workspace();
    const browser = await space.member('owner');
    const recipients = numbers(3);
    const id = await completedBatch(space.id, recipients);

    const waiting = await browser.get(`${space.base}/batches/${id}/live`);
    expect(waiting.body).toContain('data-status="completed"');
    expect(waiting.body).toContain(`hx-get="${space.base}/batches/${id}/live"`);
    expect(waiting.body).toContain('hx-trigger="every 1s"');
    expect(text(waiting, 'count-awaiting')).toBe('3');
    expect(text(waiting, 'batch-updating')).toBe('3 awaiting a receipt: updating live…');
    expect(recipientRows(waiting).map((row) => row[2])).toEqual(['sent', 'sent', 'sent']);

    // Receipts come in after the batch completed: the next poll shows them, rows too.
    await server.sql`
      update campaign_messages set delivery_status = 'delivered', delivered_at = now()
      where campaign_id = ${id} and seq <= 2`;
    const partly = await browser.get(`${space.base}/batches/${id}/live`);
    expect(text(partly, 'count-delivered')).toBe('2');
    expect(text(partly, 'count-awaiting')).toBe('1');
    expect(text(partly, 'delivery-rate')).toBe('66.67%');
    expect(partly.body).toContain('hx-trigger="every 1s"');
    expect(recipientRows(partly).map((row) => row[2])).toEqual(['delivered', 'delivered', 'sent']);

    await server.sql`
      update campaign_messages set delivery_status = 'undelivered', delivery_error_code = 'EC_ABSENT',
        delivered_at = now()
      where campaign_id = ${id} and seq = 3`;
    const settled = await browser.get(`${space.base}/batches/${id}/live`);
    expect(text(settled, 'count-awaiting')).toBe('0');
    expect(settled.body).not.toContain('hx-trigger');
    expect(settled.body).toContain('data-live="no"');
    expect(recipientRows(settled)).toEqual([
      [1, recipients[0], 'delivered', '—'],
      [2, recipients[1], 'delivered', '—'],
      [3, recipients[2], 'undelivered', 'EC_ABSENT'],
    ]);
  });

  it('stops asking once the validity window closed, receipts still awaited', async () => {
    const space = await workspace();
    const browser = await space.member('owner');
    const id = await completedBatch(space.id, numbers(2));
    await server.sql`update campaigns set valid_until = now() - interval '1 minute' where id = ${id}`;
    const live = await browser.get(`${space.base}/batches/${id}/live`);
    expect(text(live, 'count-awaiting')).toBe('2');
    expect(live.body).not.toContain('hx-trigger');
  });

  it('keeps the dashboard’s recent batches and the campaign list polling while receipts are awaited', async () => {
    const space = await workspace();
    const browser = await space.member('owner');
    const id = await completedBatch(space.id, numbers(2));
    const recent = await browser.get(`${space.base}/recent-batches`);
    expect(recent.body).toContain(`hx-get="${space.base}/recent-batches"`);
    const list = await browser.get(`${space.base}/campaigns?status=completed`);
    expect(list.body).toContain(
      `hx-get="${space.base}/campaigns?status=completed" hx-select="#campaign-rows"`,
    );
    // Its small bar says where the messages stand, for a screen reader too.
    expect(list.body).toContain('aria-label="2 messages: 2 awaiting receipt"');

    await server.sql`
      update campaign_messages set delivery_status = 'delivered', delivered_at = now()
      where campaign_id = ${id}`;
    expect((await browser.get(`${space.base}/recent-batches`)).body).not.toContain('hx-get');
    const settled = await browser.get(`${space.base}/campaigns?status=completed`);
    expect(settled.body).not.toContain('hx-select');
    expect(settled.body).toContain('aria-label="2 messages: 2 delivered"');
  });

  it('shows “Delivery rate –” until something was sent', async () => {
    const space = await workspace();
    const browser = await space.member('owner');
    const { id } = await insertCampaign(server.sql, {
      workspaceId: space.id,
      apiKeyId: null,
      source: 'quick_send',
      reference: null,
      purpose: 'transactional',
      body: 'Not yet',
      senderId: null,
      routingType: 'direct',
      providerSlug: 'own',
      failoverRouteSlug: null,
      recipients: numbers(2),
    });
    await server.sql`update campaigns set status = 'queued' where id = ${id}`;
    const page = await browser.get(`${space.base}/batches/${id}`);
    expect(text(page, 'delivery-rate')).toBe('–');
    expect(visibleText(page.body)).toContain('Delivery rate – nothing sent yet');
    const dashboard = await browser.get(space.base);
    expect(visibleText(dashboard.body)).toContain(
      'Last 7 days 0 sent · 0 delivered · 0 failed · 0 awaiting · 0 unknown – delivery rate',
    );
  });
});

describe('Error texts masked, failures by code', () => {
  let space: Awaited<ReturnType<typeof workspace>>;
  let id: number;
  const recipients = numbers(7);

  beforeAll(async () => {
    space = await workspace();
    id = await completedBatch(space.id, recipients);
    // Three numbers the simulator rejected, two Twilio refusals naming the number, an SMSC refusal,
    // and one undelivered receipt.
    await server.sql`
      update campaign_messages set status = 'failed', submitted_at = null,
        error = case
          when seq <= 3 then 'own: Destination ' || recipient || ' rejected.'
          when seq <= 5 then 'tw: Twilio error 21211: The ''To'' number ' || recipient || ' is not a valid phone number.'
          else 'smsc: ESME_RINVDSTADR (0x0000000B, invalid destination address)'
        end
      where campaign_id = ${id} and seq <= 6`;
    await server.sql`
      update campaign_messages set delivery_status = 'undelivered', delivery_error_code = 'EC_ABSENT',
        delivered_at = now()
      where campaign_id = ${id} and seq = 7`;
  });

  it('masks the number inside a provider’s error for a member without recipients.read', async () => {
    const browser = await space.member('viewer');
    const page = await browser.get(`${space.base}/batches/${id}`);
    expect(page.status).toBe(200);
    expect(recipientRows(page)[0]).toEqual([
      1,
      '•••• 5011',
      'failed to send',
      'own: Destination •••• 5011 rejected.',
    ]);
    expect(recipientRows(page)[3]?.[3]).toBe(
      "tw: Twilio error 21211: The 'To' number •••• 5014 is not a valid phone number.",
    );
    expect(page.body).not.toContain(THE_NUMBER.slice(1, 9));
    // The live fragment masks the same way.
    const live = await browser.get(`${space.base}/batches/${id}/live`);
    expect(live.body).not.toContain(THE_NUMBER.slice(1, 9));
  });

  it('groups failures by error code, in words, with one example masked like the numbers', async () => {
    const viewer = await space.member('viewer');
    expect(failuresTable(await viewer.get(`${space.base}/batches/${id}`))).toBe(
      'Stage Error Messages For example ' +
        'Failed to send rejected: the provider rejected the destination 3 own: Destination •••• 5011 rejected. ' +
        "Failed to send 21211: the number is not a valid phone number 2 tw: Twilio error 21211: The 'To' number •••• 5014 is not a valid phone number. " +
        'Failed to send ESME_RINVDSTADR: invalid destination address 1 smsc: ESME_RINVDSTADR (0x0000000B, invalid destination address) ' +
        'Undelivered EC_ABSENT: the handset was unreachable 1 —',
    );
    // A member with recipients.read sees the example as it was stored.
    const owner = await space.member('owner');
    expect(failuresTable(await owner.get(`${space.base}/batches/${id}`))).toContain(
      `3 own: Destination ${THE_NUMBER} rejected.`,
    );
  });
});

describe('Pictures', () => {
  it('draws the batch’s delivery breakdown with a legend, and the dashboard’s stacked daily bars', async () => {
    const space = await workspace();
    const browser = await space.member('owner');
    const id = await completedBatch(space.id, numbers(4));
    await server.sql`
      update campaign_messages set delivery_status = 'delivered', delivered_at = now()
      where campaign_id = ${id} and seq <= 2`;
    await server.sql`
      update campaign_messages set status = 'failed', submitted_at = null, error = 'own: HTTP 400'
      where campaign_id = ${id} and seq = 4`;
    const page = await browser.get(`${space.base}/batches/${id}`);
    expect(page.body).toContain(
      'aria-label="4 messages: 2 delivered, 1 failed to send, 1 awaiting receipt"',
    );
    expect(page.body).toContain('<rect class="part-delivered" x="0" y="0" width="50" height="10">');
    const legend = /<ul class="legend"[^>]*>([\s\S]*?)<\/ul>/.exec(page.body)?.[1] ?? '';
    expect(visibleText(legend)).toBe(
      'Delivered 2 Undelivered 0 Failed to send 1 Awaiting receipt 1',
    );

    const dashboard = await browser.get(space.base);
    const chart = /<figure class="daily-bars"[\s\S]*?<\/figure>/.exec(dashboard.body)?.[0] ?? '';
    // The legend is text on the page, not a hover.
    expect(visibleText(/<ul class="legend">[\s\S]*?<\/ul>/.exec(chart)?.[0] ?? '')).toBe(
      'Delivered 2 Failed or undelivered 1 Status unknown 0 Awaiting receipt 1',
    );
    const today = new Date().toISOString().slice(0, 10);
    // Today's bar: 4 of 4 at the top of the scale, its parts stacked.
    expect(chart).toContain(
      `<title>${today}: 2 delivered, 1 failed or undelivered, 0 status unknown, 1 awaiting receipt</title>`,
    );
    expect(chart).toContain('<rect class="daily-delivered" x="291" y="50" width="8" height="50">');
    expect(chart).toContain('<rect class="daily-failed" x="291" y="25" width="8" height="25">');
    expect(chart).toContain('<rect class="daily-awaiting" x="291" y="0" width="8" height="25">');
    expect(dashboard.body).not.toContain('uPlot');
  });
});

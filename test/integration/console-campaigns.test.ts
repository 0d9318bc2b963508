/**
 * Console Campaigns: the workspace's named campaigns and Quick Send / API batches listed newest
 * first under status, source and period filters (bad values answered inline, 422), a page at a
 * time; named campaigns created with the use-case of `herald campaign create`; each batch's
 * report giving the numbers the MCP report tools give, its recipients masked to the last four
 * digits unless the member has recipients.read; members without campaigns.read refused.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSender } from '../../commands/providers/senders.js';
import { updateWorkspaceMember } from '../../commands/team/members.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { insertCampaign } from '../../db/campaigns.js';
import type { Role } from '../../domain/access.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, type Page, visibleText } from '../support/console.js';
import { type McpServerUnderTest, openMcpServer } from '../support/mcp.js';
import { connectWithForms } from '../support/oauth-forms.js';

let server: McpServerUnderTest;
const PASSWORD = 'correct horse 1';
const DAY_MS = 86_400_000;
const STATUSES = 'paused, scheduled, queued, completed, canceled';

beforeAll(async () => {
  server = await openMcpServer();
});
afterAll(() => server.close());

const issued = new Set<string>();
/** Australian mobiles under +61491, a prefix no other test file draws from. */
function numbers(count: number): string[] {
  const result: string[] = [];
  while (result.length < count) {
    const number = `+61491${String(randomInt(1_000_000)).padStart(6, '0')}`;
    if (issued.has(number)) continue;
    issued.add(number);
    result.push(number);
  }
  return result;
}

interface Workspace {
  slug: string;
  id: number;
  /** A member of `role`, signed in to the console. */
  member(role: Role): Promise<{ email: string; browser: ConsoleBrowser }>;
}

async function workspace(): Promise<Workspace> {
  const slug = `c-${randomBytes(5).toString('hex')}`;
  const created = await createWorkspace(server, { name: `Campaigns ${slug}`, slug }, TEST_OPERATOR);
  return {
    slug,
    id: created.id,
    async member(role) {
      const email = `${role}-${randomBytes(3).toString('hex')}@${slug}.test`;
      await addUser(server, { workspace: slug, email, password: PASSWORD, role }, TEST_OPERATOR);
      const browser = new ConsoleBrowser(server.app);
      expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
      return { email, browser };
    },
  };
}

interface Seed {
  source: 'api' | 'quick_send' | 'campaign';
  name?: string;
  status: 'queued' | 'paused' | 'completed';
  createdAt: Date;
  recipients?: string[];
}

/** A batch saved as the sends save one (never dispatched), then dated and settled to `seed`. */
async function seedBatch(workspaceId: number, seed: Seed): Promise<number> {
  const { id } = await insertCampaign(server.sql, {
    workspaceId,
    apiKeyId: null,
    source: seed.source,
    name: seed.name ?? null,
    reference: null,
    purpose: 'transactional',
    body: 'Seeded',
    senderId: null,
    routingType: 'direct',
    providerSlug: 'own',
    failoverRouteSlug: null,
    recipients: seed.recipients ?? numbers(1),
  });
  // The report row takes created_at when the batch is saved; a batch of the past is both.
  await server.sql`update campaigns set created_at = ${seed.createdAt} where id = ${id}`;
  await server.sql`update report_batches set created_at = ${seed.createdAt} where campaign_id = ${id}`;
  await server.sql`
    update campaigns set status = ${seed.status},
      completed_at = ${seed.status === 'completed' ? seed.createdAt : null}
    where id = ${id}`;
  return id;
}

/** The batch ids of the Campaigns table, top to bottom. */
const listed = (page: Page) =>
  [...page.body.matchAll(/data-batch="(\d+)"/g)].map((m) => Number(m[1]));

const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);

describe('Campaigns list', () => {
  let space: Workspace;
  let browser: ConsoleBrowser;
  /** Oldest first, as created: a fixed January day, 40 and 10 days ago, and now. */
  const ids = { january: 0, fortyDays: 0, tenDays: 0, quickSend: 0, api: 0 };

  beforeAll(async () => {
    space = await workspace();
    ({ browser } = await space.member('viewer'));
    ids.january = await seedBatch(space.id, {
      source: 'campaign',
      name: 'January news',
      status: 'completed',
      createdAt: new Date('2025-01-15T12:00:00Z'),
    });
    ids.fortyDays = await seedBatch(space.id, {
      source: 'api',
      status: 'completed',
      createdAt: daysAgo(40),
    });
    ids.tenDays = await seedBatch(space.id, {
      source: 'campaign',
      name: 'Autumn sale',
      status: 'paused',
      createdAt: daysAgo(10),
    });
    ids.quickSend = await seedBatch(space.id, {
      source: 'quick_send',
      status: 'queued',
      createdAt: daysAgo(1),
    });
    ids.api = await seedBatch(space.id, {
      source: 'api',
      status: 'completed',
      createdAt: daysAgo(0),
    });
    // Another workspace's batch never shows.
    const other = await workspace();
    await seedBatch(other.id, { source: 'api', status: 'completed', createdAt: daysAgo(0) });
  });

  const list = (query = '') => browser.get(`/console/w/${space.slug}/campaigns${query}`);

  it('lists every batch of the workspace, newest first, with name, source and status', async () => {
    const page = await list();
    expect(page.status).toBe(200);
    expect(listed(page)).toEqual([ids.api, ids.quickSend, ids.tenDays, ids.fortyDays, ids.january]);
    const row = (id: number) =>
      visibleText(new RegExp(`<tr data-batch="${id}">[\\s\\S]*?</tr>`).exec(page.body)?.[0] ?? '');
    expect(row(ids.tenDays)).toMatch(
      new RegExp(
        `^#${ids.tenDays} Autumn sale Campaign paused 1 0 0 0 \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`,
      ),
    );
    expect(row(ids.quickSend)).toMatch(
      new RegExp(`^#${ids.quickSend} Quick Send #${ids.quickSend} Quick Send queued `),
    );
    expect(row(ids.api)).toMatch(
      new RegExp(`^#${ids.api} API send #${ids.api} API send completed `),
    );
    // A viewer may read but not create.
    expect(page.body).not.toContain('/campaigns/new');
  });

  it.each([
    ['?status=completed', ['api', 'fortyDays', 'january']],
    ['?status=paused', ['tenDays']],
    ['?status=queued', ['quickSend']],
    ['?source=api', ['api', 'fortyDays']],
    ['?source=quick_send', ['quickSend']],
    ['?source=campaign', ['tenDays', 'january']],
    ['?period=7d', ['api', 'quickSend']],
    ['?period=30d', ['api', 'quickSend', 'tenDays']],
    ['?period=all', ['api', 'quickSend', 'tenDays', 'fortyDays', 'january']],
    ['?period=dates&from=2025-01-15&to=2025-01-15', ['january']],
    ['?from=2025-01-16', ['api', 'quickSend', 'tenDays', 'fortyDays']],
    ['?period=dates&to=2025-01-14', []],
    // Dates count only for a period of dates.
    ['?period=7d&from=2025-01-01&to=2025-01-31', ['api', 'quickSend']],
    ['?source=campaign&period=30d', ['tenDays']],
    ['?status=completed&source=api&period=30d', ['api']],
    ['?status=&source=&period=&from=&to=', ['api', 'quickSend', 'tenDays', 'fortyDays', 'january']],
  ] as const)('filters %s', async (query, expected) => {
    const page = await list(query);
    expect(page.status).toBe(200);
    expect(listed(page)).toEqual(expected.map((name) => ids[name]));
    if (expected.length === 0) {
      expect(visibleText(page.body)).toContain(
        'No batches match this filter Try another status, source or period, or clear the filters',
      );
    }
  });

  it.each([
    ['?status=sent', 'status', `Status must be one of ${STATUSES}.`],
    ['?status=queued&status=paused', 'status', `Status must be one of ${STATUSES}.`],
    ['?source=sms', 'source', 'Source must be one of api, quick_send, campaign.'],
    ['?period=90d', 'period', 'Period must be one of 7d, 30d, all, dates.'],
    ['?from=2025-02-30', 'from', 'From must be a date (YYYY-MM-DD).'],
    ['?period=dates&to=yesterday', 'to', 'To must be a date (YYYY-MM-DD).'],
    ['?period=dates', 'from', 'Give a From or a To date.'],
    ['?from=2025-03-02&to=2025-03-01', 'to', 'To must not be before From.'],
    // Days Postgres cannot store (year 0, or the day after 9999-12-31) answered 500 before.
    ['?from=0000-01-01', 'from', 'From must be a day from 2000-01-01 to 2999-12-31.'],
    ['?period=dates&to=9999-12-31', 'to', 'To must be a day from 2000-01-01 to 2999-12-31.'],
    ['?from=1999-12-31', 'from', 'From must be a day from 2000-01-01 to 2999-12-31.'],
    ['?older_than=abc', 'page', 'The page must be a batch number.'],
    ['?older_than=5&newer_than=9', 'page', 'A page is either older or newer, not both.'],
  ])('answers %s with 422 and the error at its filter', async (query, field, message) => {
    const page = await list(query);
    expect(page.status).toBe(422);
    // Under its own filter (the page cursor's under the filters), the only error shown.
    const at =
      field === 'page'
        ? '</div>\\s*</div>\\s*'
        : `<div class="field invalid">\\s*<label for="filter-${field}">(?:(?!<div class="field)[\\s\\S])*`;
    expect(page.body).toMatch(
      new RegExp(`${at}<div class="field-error">${escapeRegExp(message)}</div>`),
    );
    expect(page.body.match(/class="field-error"/g)).toHaveLength(1);
    expect(visibleText(page.body)).toContain(
      'The filter was not applied: correct the value marked above.',
    );
    expect(listed(page)).toEqual([]);
    // The value as given is shown again in its field.
    const from = new URLSearchParams(query).get('from');
    if (from)
      expect(page.body).toContain(`id="filter-from" name="from" type="date" value="${from}"`);
  });

  it('shows an empty workspace its empty state', async () => {
    const empty = await workspace();
    const { browser: owner } = await empty.member('owner');
    const page = await owner.get(`/console/w/${empty.slug}/campaigns`);
    expect(page.status).toBe(200);
    expect(visibleText(page.body)).toContain(
      'Nothing sent yet Batches sent with the REST API (API sends), Quick Send or a campaign appear here. Create a campaign',
    );
  });

  it('pages by keyset, newest first, keeping the filter', async () => {
    const paged = await workspace();
    const { browser: owner } = await paged.member('owner');
    const apiIds: number[] = [];
    for (let index = 0; index < 30; index++) {
      apiIds.push(
        await seedBatch(paged.id, { source: 'api', status: 'completed', createdAt: daysAgo(2) }),
      );
      // Batches of another source between them are filtered out, not counted in a page.
      if (index % 10 === 0)
        await seedBatch(paged.id, {
          source: 'quick_send',
          status: 'completed',
          createdAt: daysAgo(2),
        });
    }
    const newestFirst = [...apiIds].reverse();
    const base = `/console/w/${paged.slug}/campaigns`;
    const first = await owner.get(`${base}?source=api&period=7d`);
    expect(listed(first)).toEqual(newestFirst.slice(0, 25));
    const olderHref = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
    expect(olderHref).toBe(`${base}?source=api&period=7d&older_than=${newestFirst[24]}`);
    expect(first.body).not.toContain('rel="prev"');
    const second = await owner.get(olderHref as string);
    expect(listed(second)).toEqual(newestFirst.slice(25));
    expect(second.body).not.toContain('rel="next"');
    const newerHref = /href="([^"]+)" rel="prev"/.exec(second.body)?.[1]?.replaceAll('&amp;', '&');
    expect(newerHref).toBe(`${base}?source=api&period=7d&newer_than=${newestFirst[25]}`);
    const back = await owner.get(newerHref as string);
    expect(listed(back)).toEqual(newestFirst.slice(0, 25));
    expect(back.body).not.toContain('rel="prev"');
    expect(back.body).toContain('rel="next"');
  });
});

describe('Create campaign', () => {
  it('creates a named campaign with the CLI use-case; it sends and appears in the list by name', async () => {
    const space = await workspace();
    const { email, browser } = await space.member('developer');
    const form = await browser.get(`/console/w/${space.slug}/campaigns/new`);
    expect(form.status).toBe(200);
    const recipients = numbers(2);
    const created = await browser.post(`/console/w/${space.slug}/campaigns`, {
      name: 'Spring launch',
      recipients: recipients.join('\n'),
      message: 'Spring is here',
      purpose: 'transactional',
      sender_id: '',
      provider: '',
      failover_route: '',
    });
    expect(created.status).toBe(303);
    const id = Number(/\/batches\/(\d+)\?done=created$/.exec(created.location ?? '')?.[1]);
    expect(id).toBeGreaterThan(0);
    const [row] = await server.sql`
      select source, name, api_key_id, purpose, body, routing_type, provider_slug,
             requested_recipients, workflow_id
      from campaigns where id = ${id}`;
    expect(row).toEqual({
      source: 'campaign',
      name: 'Spring launch',
      apiKeyId: null,
      purpose: 'transactional',
      body: 'Spring is here',
      routingType: 'direct',
      providerSlug: 'own',
      requestedRecipients: 2,
      workflowId: `campaign/${space.id}/id-${id}`,
    });
    await expect
      .poll(
        async () =>
          (await server.sql`select status from campaigns where id = ${id}`)[0]?.status as string,
        { timeout: 30_000, interval: 200 },
      )
      .toBe('completed');

    const report = await browser.get(created.location as string);
    expect(visibleText(report.body)).toContain(
      `Batch #${id} · Spring launch Campaign · transactional`,
    );
    expect(visibleText(report.body)).toContain('The campaign was created and is sending.');
    const page = await browser.get(`/console/w/${space.slug}/campaigns?source=campaign`);
    expect(listed(page)).toEqual([id]);
    expect(visibleText(page.body)).toContain(`#${id} Spring launch Campaign completed 2 2`);

    const [entry] = await server.sql`
      select actor, action, target, details, source from audit_log
      where workspace_id = ${space.id} and action = 'campaign.created'`;
    expect(entry).toEqual({
      actor: email,
      action: 'campaign.created',
      target: `campaign #${id}`,
      details: { name: 'Spring launch', recipients: 2, dispatch_confirmed: true },
      source: 'console',
    });
  });

  it.each([
    [{ name: '' }, 'name', 'Name is required'],
    [{ name: 'n'.repeat(201) }, 'name', 'Name must be at most 200 characters'],
    [{ recipients: '' }, 'recipients', 'Recipients is required'],
    [
      { recipients: 'PLACEHOLDER\n0412' },
      'recipients',
      'Line 2 of Recipients: the number must be a valid E.164 phone number.',
    ],
    [{ message: ' ' }, 'body', 'Message is required'],
    [
      { message: 'Stop: {opt_out_url}' },
      'body',
      'Message: The message field may only contain {opt_out_url} when the message purpose is marketing.',
    ],
    [{ purpose: 'promotional' }, 'purpose', 'Purpose: The selected message purpose is invalid.'],
    [
      { provider: 'sim', failover_route: 'main' },
      'provider',
      'Provider and Failover route are exclusive',
    ],
    [{ provider: 'ghost' }, 'provider', 'Provider "ghost" is not a provider of SLUG'],
    [
      { failover_route: 'nowhere' },
      'failoverRoute',
      'Failover route "nowhere" is not a failover route of SLUG',
    ],
    [
      { sender_id: 'CommBank' },
      'senderId',
      'Sender id: The selected sender id is not an approved sender of the own provider.',
    ],
  ])('refuses %j inline, with the CLI rules, and saves nothing', async (change, field, message) => {
    const space = await workspace();
    const { browser } = await space.member('owner');
    await browser.get(`/console/w/${space.slug}/campaigns/new`);
    const [valid] = numbers(1) as [string];
    const fields: Record<string, string> = {
      name: 'Refused',
      recipients: valid,
      message: 'Hello',
      purpose: 'transactional',
      ...change,
    };
    fields.recipients = (fields.recipients ?? '').replace('PLACEHOLDER', valid);
    const refused = await browser.post(`/console/w/${space.slug}/campaigns`, fields);
    expect(refused.status).toBe(422);
    const expected = message.replace('SLUG', space.slug);
    const input = {
      name: 'name',
      recipients: 'recipients',
      body: 'message',
      purpose: 'purpose',
      provider: 'provider',
      failoverRoute: 'failover_route',
      senderId: 'sender_id',
    }[field];
    // Inside its own field's block, the only error on the page.
    expect(refused.body).toMatch(
      new RegExp(
        `<div class="field invalid">\\s*<label for="campaign-${input}">(?:(?!<div class="field)[\\s\\S])*<div class="field-error">${escapeRegExp(expected.replaceAll('"', '&quot;'))}</div>`,
      ),
    );
    expect(refused.body.match(/class="field-error"/g)).toHaveLength(1);
    const [count] = await server.sql`
      select count(*)::int as count from campaigns where workspace_id = ${space.id}`;
    expect(count?.count).toBe(0);
  });

  it('refuses a sender pending approval for own, and sends from an approved one', async () => {
    const space = await workspace();
    const { browser } = await space.member('developer');
    await registerSender(
      server,
      { workspace: space.slug, provider: 'own', sender: 'Acme' },
      TEST_OPERATOR,
    );
    await registerSender(
      server,
      {
        workspace: space.slug,
        provider: 'own',
        sender: 'Pending',
        approved: false,
      },
      TEST_OPERATOR,
    );
    await browser.get(`/console/w/${space.slug}/campaigns/new`);
    const [recipient] = numbers(1) as [string];
    const fields = { name: 'Branded', recipients: recipient, message: 'Hello' };
    const refused = await browser.post(`/console/w/${space.slug}/campaigns`, {
      ...fields,
      sender_id: 'Pending',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatch(
      /<div class="field invalid">\s*<label for="campaign-sender_id">(?:(?!<div class="field)[\s\S])*<div class="field-error">Sender id: The selected sender id is not an approved sender of the own provider.<\/div>/,
    );
    const created = await browser.post(`/console/w/${space.slug}/campaigns`, {
      ...fields,
      sender_id: 'Acme',
    });
    expect(created.status).toBe(303);
    const [row] = await server.sql`
      select sender_id, provider_slug from campaigns where workspace_id = ${space.id}`;
    expect(row).toEqual({ senderId: 'Acme', providerSlug: 'own' });
  });

  it('refuses a viewer the form and the create, and a request without the CSRF token', async () => {
    const space = await workspace();
    const { browser: viewer } = await space.member('viewer');
    const form = await viewer.get(`/console/w/${space.slug}/campaigns/new`);
    expect(form.status).toBe(403);
    expect(visibleText(form.body)).toContain(
      'This needs the campaigns.read permission and the owner or admin or developer role in this workspace.',
    );
    await viewer.get(`/console/w/${space.slug}/campaigns`);
    const fields = { name: 'Nope', recipients: numbers(1).join('\n'), message: 'Hi' };
    expect((await viewer.post(`/console/w/${space.slug}/campaigns`, fields)).status).toBe(403);
    const { browser: owner } = await space.member('owner');
    await owner.get(`/console/w/${space.slug}/campaigns/new`);
    const forged = await owner.post(`/console/w/${space.slug}/campaigns`, {
      ...fields,
      _csrf: null,
    });
    expect(forged.status).toBe(403);
    expect(visibleText(forged.body)).toContain('Request refused');
    const [count] = await server.sql`
      select count(*)::int as count from campaigns where workspace_id = ${space.id}`;
    expect(count?.count).toBe(0);
  });
});

describe('Batch report', () => {
  let space: Workspace;
  let owner: { email: string; browser: ConsoleBrowser };
  let accessToken: string;
  const recipients = numbers(9);
  let campaignId: number;
  let quickSendId: number;

  /**
   * Settles a seeded batch as the workflow and receipts would: 2 fail to send, 7 are sent; of
   * those 4 delivered, 1 undelivered, 2 awaiting a receipt.
   */
  async function settle(id: number) {
    await server.sql`
      update campaign_messages set status = case when seq <= 2 then 'failed' else 'sent' end,
        error = case when seq <= 2 then 'provider_rejected' end,
        provider_slug = 'own', submitted_at = case when seq > 2 then now() end
      where campaign_id = ${id}`;
    await server.sql`
      update campaign_messages set
        delivery_status = case when seq = 3 then 'undelivered' else 'delivered' end,
        delivery_error_code = case when seq = 3 then '30003' end, delivered_at = now()
      where campaign_id = ${id} and seq between 3 and 7`;
  }

  beforeAll(async () => {
    space = await workspace();
    owner = await space.member('owner');
    campaignId = await seedBatch(space.id, {
      source: 'campaign',
      name: 'Report check',
      status: 'completed',
      createdAt: daysAgo(0),
      recipients,
    });
    quickSendId = await seedBatch(space.id, {
      source: 'quick_send',
      status: 'queued',
      createdAt: daysAgo(0),
      recipients: numbers(9),
    });
    await settle(campaignId);
    await settle(quickSendId);
    accessToken = (
      await connectWithForms(server.baseUrl, { email: owner.email, password: PASSWORD })
    ).accessToken;
  });

  async function tool(name: string, args: Record<string, unknown>) {
    const response = await fetch(`${server.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      result: { structuredContent: Record<string, Record<string, unknown>> };
    };
    return body.result.structuredContent;
  }

  /** What the report page shows, in the MCP report's terms. */
  function shown(page: Page) {
    const text = (id: string) =>
      visibleText(new RegExp(`id="${id}">([^<]*)<`).exec(page.body)?.[1] ?? '');
    const count = (id: string) => Number(text(id).replaceAll(',', ''));
    return {
      routing: text('batch-routing'),
      provider: text('batch-provider'),
      status: text('batch-status'),
      recipients: count('count-recipients'),
      sent: count('count-sent'),
      failed_to_send: count('count-failed'),
      delivered: count('count-delivered'),
      delivery_failed: count('count-undelivered'),
      awaiting_delivery: count('count-awaiting'),
      delivery_rate_percent: Number(text('delivery-rate').replace('%', '')),
    };
  }

  it.each([
    ['campaign', 'get_campaign_report', 'campaign_id', 'campaign'],
    ['Quick Send', 'get_quick_send_report', 'quick_send_id', 'quick_send'],
  ] as const)('shows the numbers %s reports give over MCP', async (_kind, name, argument, key) => {
    const id = key === 'campaign' ? campaignId : quickSendId;
    const page = await owner.browser.get(`/console/w/${space.slug}/batches/${id}`);
    expect(page.status).toBe(200);
    const report = (await tool(name, { [argument]: id }))[key] as Record<string, unknown>;
    const provider = report.provider as { name: string };
    expect(shown(page)).toEqual({
      routing: report.routing_type === 'direct' ? 'Direct provider' : 'Failover route',
      provider: provider.name,
      status: report.status,
      recipients: report.recipients,
      sent: report.sent,
      failed_to_send: report.failed_to_send,
      delivered: report.delivered,
      delivery_failed: report.delivery_failed,
      awaiting_delivery: report.awaiting_delivery,
      delivery_rate_percent: report.delivery_rate_percent,
    });
    // And the figures themselves, so a shared mistake cannot pass.
    expect(shown(page)).toMatchObject({
      routing: 'Direct provider',
      provider: 'Herald',
      recipients: 9,
      sent: 7,
      failed_to_send: 2,
      delivered: 4,
      delivery_failed: 1,
      awaiting_delivery: 2,
      delivery_rate_percent: 57.14,
    });
    const failures = /<h2>Failures by error<\/h2>[\s\S]*?<\/table>/.exec(page.body)?.[0] ?? '';
    expect(visibleText(failures)).toBe(
      // Issue 31: by code, in words, with one example where the code alone does not say it all.
      'Failures by error Stage Error Messages For example Failed to send provider_rejected 2 — Undelivered 30003: the handset was unreachable 1 —',
    );
  });

  /** The recipients table's rows: position, number and status. */
  const recipientRows = (page: Page) =>
    [
      ...(/<table id="recipients">[\s\S]*?<\/table>/.exec(page.body)?.[0] ?? '').matchAll(
        /<tr>\s*<td class="num">(\d+)<\/td>\s*<td class="mono">([^<]*)<\/td>\s*<td>([\s\S]*?)<\/td>/g,
      ),
    ].map((m) => [Number(m[1]), m[2], visibleText(m[3] ?? '')]);

  it('shows recipients in full to a member with recipients.read (an owner by default)', async () => {
    const page = await owner.browser.get(`/console/w/${space.slug}/batches/${campaignId}`);
    expect(recipientRows(page)).toEqual(
      recipients.map((number, index) => [
        index + 1,
        number,
        index < 2
          ? 'failed to send'
          : index === 2
            ? 'undelivered'
            : index < 7
              ? 'delivered'
              : 'sent',
      ]),
    );
  });

  it('masks every number to its last four digits for a member without it; the full number never reaches the page', async () => {
    for (const role of ['developer', 'viewer'] as const) {
      const { browser } = await space.member(role);
      const page = await browser.get(`/console/w/${space.slug}/batches/${campaignId}`);
      expect(page.status).toBe(200);
      expect(recipientRows(page)).toEqual(
        recipients.map((number, index) => [
          index + 1,
          `•••• ${number.slice(-4)}`,
          index < 2
            ? 'failed to send'
            : index === 2
              ? 'undelivered'
              : index < 7
                ? 'delivered'
                : 'sent',
        ]),
      );
      // No number in full, nor any digits before the last four.
      expect(page.body).not.toContain('+61491');
      expect(visibleText(page.body)).toContain(
        'Numbers are shown by their last four digits: seeing them in full needs the recipients.read permission.',
      );
    }
  });

  it('follows the permission as it is granted and revoked, on the next request', async () => {
    const developer = await space.member('developer');
    const url = `/console/w/${space.slug}/batches/${campaignId}`;
    const [first] = recipients as [string];
    expect((await developer.browser.get(url)).body).not.toContain(first);
    await updateWorkspaceMember(
      server,
      {
        workspace: space.slug,
        email: developer.email,
        grant: ['recipients.read'],
      },
      TEST_OPERATOR,
    );
    expect(recipientRows(await developer.browser.get(url))[0]).toEqual([
      1,
      first,
      'failed to send',
    ]);
    await updateWorkspaceMember(
      server,
      {
        workspace: space.slug,
        email: developer.email,
        revoke: ['recipients.read'],
      },
      TEST_OPERATOR,
    );
    const page = await developer.browser.get(url);
    expect(page.body).not.toContain(first);
    expect(recipientRows(page)[0]).toEqual([1, `•••• ${first.slice(-4)}`, 'failed to send']);
  });

  it('pages the recipients, 50 at a time', async () => {
    const many = numbers(60);
    const id = await seedBatch(space.id, {
      source: 'api',
      status: 'queued',
      createdAt: daysAgo(0),
      recipients: many,
    });
    const url = `/console/w/${space.slug}/batches/${id}`;
    const first = await owner.browser.get(url);
    expect(recipientRows(first).map(([, number]) => number)).toEqual(many.slice(0, 50));
    expect(first.body).toContain(`href="${url}?after=50">Next recipients</a>`);
    const second = await owner.browser.get(`${url}?after=50`);
    expect(recipientRows(second).map(([, number]) => number)).toEqual(many.slice(50));
    expect(second.body).not.toContain('Next recipients');
    expect(second.body).toContain(`href="${url}">First recipients</a>`);
  });

  it("answers another workspace's batch and a bad id with 404", async () => {
    const other = await workspace();
    const theirs = await seedBatch(other.id, {
      source: 'api',
      status: 'completed',
      createdAt: daysAgo(0),
    });
    for (const id of [String(theirs), 'abc', '0', '99999999999999999999']) {
      const page = await owner.browser.get(`/console/w/${space.slug}/batches/${id}`);
      expect(page.status).toBe(404);
      expect(visibleText(page.body)).toContain('This workspace has no batch with that number.');
    }
  });

  it('refuses a member without campaigns.read the list and the report (403)', async () => {
    const viewer = await space.member('viewer');
    await updateWorkspaceMember(
      server,
      {
        workspace: space.slug,
        email: viewer.email,
        revoke: ['campaigns.read'],
      },
      TEST_OPERATOR,
    );
    for (const path of ['campaigns', `batches/${campaignId}`, `batches/${campaignId}/live`]) {
      const page = await viewer.browser.get(`/console/w/${space.slug}/${path}`);
      expect(page.status).toBe(403);
      expect(visibleText(page.body)).toContain(
        'Not allowed This needs the campaigns.read permission in this workspace.',
      );
      expect(page.body).not.toContain('+61491');
    }
  });
});

describe('migration 0015', () => {
  it('grants recipients.read to the owners and admins already there, not to developers or viewers', async () => {
    const space = await workspace();
    for (const role of ['owner', 'admin', 'developer', 'viewer'] as const) await space.member(role);
    const permissionsOf = async () =>
      Object.fromEntries(
        (
          await server.sql<{ role: string; permissions: string[] }[]>`
            select role, permissions from workspace_members
            where workspace_id = ${space.id} order by role`
        ).map((row) => [row.role, row.permissions]),
      );
    const migration = await readFile(
      new URL('../../db/migrations/0015_recipients_permission.sql', import.meta.url),
      'utf8',
    );
    const rolledBack = new Error('rolled back');
    // Members saved before the permission existed: run the migration on them, then undo it all.
    await expect(
      server.sql.begin(async (tx) => {
        await tx`
          update workspace_members set permissions = array_remove(permissions, 'recipients.read')
          where workspace_id = ${space.id}`;
        await tx.unsafe(migration);
        await tx.unsafe(migration);
        const rows = await tx<{ role: string; permissions: string[] }[]>`
          select role, permissions from workspace_members
          where workspace_id = ${space.id} order by role`;
        expect(Object.fromEntries(rows.map((row) => [row.role, row.permissions]))).toEqual({
          owner: [
            'developer_tools.read',
            'campaigns.read',
            'messages.read',
            'reports.read',
            'members.read',
            'recipients.read',
          ],
          admin: [
            'developer_tools.read',
            'campaigns.read',
            'messages.read',
            'reports.read',
            'members.read',
            'recipients.read',
          ],
          developer: ['developer_tools.read', 'campaigns.read', 'messages.read', 'reports.read'],
          viewer: ['campaigns.read', 'reports.read'],
        });
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
    // Members added today have the role's set already.
    expect((await permissionsOf()).owner).toContain('recipients.read');
    expect((await permissionsOf()).developer).not.toContain('recipients.read');
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

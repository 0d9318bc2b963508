/**
 * One save for the three doors (commands/messaging/save-campaign.ts): the same recipients and
 * message sent by REST, by Quick Send and as a named campaign are stored alike but for their
 * source, name and key, and a number the fraud guard blocks is refused by the same rule in each
 * door's framing, saving nothing. Quick Send and the named campaign are audited with their save,
 * a REST send is not. A cancel is audited in its transaction by whoever canceled (a console member,
 * an operator, an API key), once.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { campaignCancel, campaignCreate } from '../../cli/admin/campaigns.js';
import { operatorActor } from '../../cli/context.js';
import type { Actor } from '../../commands/actor.js';
import { cancelCampaign } from '../../commands/messaging/cancel-campaign.js';
import { createNamedCampaign } from '../../commands/messaging/named-campaigns.js';
import { sendQuickSend } from '../../commands/messaging/quick-send.js';
import { parseEnv } from '../../config/env.js';
import { numbers, postMessages } from '../support/send.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

let stack: Stack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
});
afterAll(() => stack?.close());

const deps = () => ({
  sql: stack.sql,
  temporal: stack.temporal,
  env: stack.admin.env,
  publicUrl: PUBLIC_URL,
  secret: stack.admin.secret,
});
/** The CLI's context with the run's Temporal, so `campaign create` dispatches. */
const cli = () => ({
  ...stack.admin,
  env: parseEnv({ LOG_LEVEL: 'silent', PUBLIC_URL, TEMPORAL_ADDRESS: inject('temporalAddress') }),
});
const member = (): Actor => ({
  kind: 'member',
  userId: tenant.userId,
  email: `dev@${tenant.slug}.test`,
  address: '203.0.113.7',
  userAgent: 'save-campaign test',
});

/** A time an hour ahead, as a person types it: to the second, with an offset. */
const anHourAhead = () =>
  new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000)
    .toISOString()
    .replace('.000Z', '+00:00');

/** What a save stores of a batch, but for what tells the doors apart (source, name, key). */
async function stored(id: number) {
  const [campaign] = await stack.sql`
    select reference, purpose, body, sender_id, routing_type, provider_slug, failover_route_slug,
           requested_recipients, excluded_recipients, segments, scheduled_at,
           valid_until - scheduled_at as validity, status
    from campaigns where id = ${id}`;
  const messages = await stack.sql`
    select seq, recipient, status, body, segments from campaign_messages
    where campaign_id = ${id} order by seq`;
  return { campaign, messages };
}

async function origin(id: number) {
  const [row] = await stack.sql`
    select source, name, api_key_id, workflow_id from campaigns where id = ${id}`;
  return row;
}

const auditOf = (action: string, target: string) =>
  stack.sql`
    select actor, source, details, host(address) as address, user_agent, origin, user_id
    from audit_log
    where workspace_id = ${tenant.workspaceId} and action = ${action} and target = ${target}`;

const campaignCount = async () =>
  Number(
    (
      await stack.sql`select count(*)::int as n from campaigns where workspace_id = ${tenant.workspaceId}`
    )[0]?.n,
  );

describe('the three doors share one save', () => {
  const ids: Record<'api' | 'quickSend' | 'named', number> = { api: 0, quickSend: 0, named: 0 };
  const sendAt = anHourAhead();

  it('stores the same batch whichever door it came through', async () => {
    const recipients = numbers(2);
    const message = 'Your table is ready at 7 pm.';

    const api = await postMessages(stack, tenant.token, { recipients, message, send_at: sendAt });
    expect(api.statusCode, api.body).toBe(202);
    ids.api = api.json().data.message.id;

    const quick = await sendQuickSend(deps(), member(), tenant.workspaceId, {
      recipients: recipients.join('\n'),
      message,
      sendAt,
    });
    expect(quick).toMatchObject({ outcome: 'sent', confirmed: true, recipients: 2 });
    ids.quickSend = (quick as { campaignId: number }).campaignId;

    const named = await campaignCreate(cli(), {
      workspace: tenant.slug,
      name: 'Dinner',
      recipients: recipients.join(','),
      body: message,
      'send-at': sendAt,
    });
    expect(named.json).toEqual({
      id: expect.any(Number),
      status: 'scheduled',
      scheduled_at: expect.any(Date),
    });
    ids.named = named.json.id as number;

    const expected = {
      campaign: {
        reference: null,
        purpose: 'transactional',
        body: message,
        senderId: null,
        routingType: 'direct',
        providerSlug: 'own',
        failoverRouteSlug: null,
        requestedRecipients: 2,
        excludedRecipients: 0,
        segments: 1,
        scheduledAt: new Date(sendAt),
        validity: '1 day',
        status: 'scheduled',
      },
      messages: recipients.map((recipient, index) => ({
        seq: index + 1,
        recipient,
        status: 'queued',
        body: null,
        segments: null,
      })),
    };
    for (const id of Object.values(ids)) expect(await stored(id)).toEqual(expected);

    expect(await origin(ids.api)).toEqual({
      source: 'api',
      name: null,
      apiKeyId: expect.any(Number),
      workflowId: `campaign/${tenant.workspaceId}/id-${ids.api}`,
    });
    expect(await origin(ids.quickSend)).toEqual({
      source: 'quick_send',
      name: null,
      apiKeyId: null,
      workflowId: `campaign/${tenant.workspaceId}/id-${ids.quickSend}`,
    });
    expect(await origin(ids.named)).toEqual({
      source: 'campaign',
      name: 'Dinner',
      apiKeyId: null,
      workflowId: `campaign/${tenant.workspaceId}/id-${ids.named}`,
    });
  });

  it('audits Quick Send and the named campaign with their save, and no REST send', async () => {
    expect(await auditOf('quick_send.sent', `batch #${ids.quickSend}`)).toEqual([
      {
        actor: `dev@${tenant.slug}.test`,
        source: 'console',
        details: { recipients: 2, dispatch_confirmed: true, scheduled_at: sendAt },
        address: '203.0.113.7',
        userAgent: 'save-campaign test',
        origin: null,
        userId: tenant.userId,
      },
    ]);
    const { user, host } = operatorActor() as { user: string; host: string };
    expect(await auditOf('campaign.created', `campaign #${ids.named}`)).toEqual([
      {
        actor: user,
        source: 'cli',
        details: { name: 'Dinner', recipients: 2, dispatch_confirmed: true, scheduled_at: sendAt },
        address: null,
        userAgent: null,
        origin: `cli@${host}`,
        userId: null,
      },
    ]);
    const [apiLines] = await stack.sql`
      select count(*)::int as n from audit_log
      where workspace_id = ${tenant.workspaceId} and target in (${`batch #${ids.api}`}, ${`campaign #${ids.api}`})`;
    expect(apiLines?.n).toBe(0);
  });

  it('refuses a number the fraud guard blocks by the same rule at each door, saving nothing', async () => {
    const blocked = '+449098790000';
    const [allowed] = numbers(1) as [string];
    const before = await campaignCount();
    const rule = 'is in a blocked number range (+449) for SMS.';

    const api = await postMessages(stack, tenant.token, {
      recipients: [allowed, blocked],
      message: 'Hello',
    });
    expect(api.statusCode).toBe(422);
    expect(api.json()).toEqual({
      message: `The recipients.1 field ${rule}`,
      errors: { 'recipients.1': [`The recipients.1 field ${rule}`] },
    });

    expect(
      await sendQuickSend(deps(), member(), tenant.workspaceId, {
        recipients: `${allowed}\n${blocked}`,
        message: 'Hello',
      }),
    ).toEqual({ outcome: 'invalid', errors: { recipients: [`Line 2: the number ${rule}`] } });

    // The named campaign tells the recipient by its input field (commands/messaging/named-campaigns.ts).
    const named = await createNamedCampaign(
      deps(),
      member(),
      { workspace: tenant.slug, name: 'Blocked', recipients: [allowed, blocked], body: 'Hello' },
      async () => ({ confirmed: false }),
    ).catch((error: Error) => error);
    expect(named).toBeInstanceOf(Error);
    expect((named as Error).message).toMatch(/^(Line 2 of )?recipients: /);
    expect((named as Error).message.endsWith(` ${rule}`)).toBe(true);

    expect(await campaignCount()).toBe(before);
  });
});

describe('cancel is audited by whoever canceled', () => {
  const settled = { canceled: 2, settling: 0, sent: 0, failed: 0 };

  async function scheduledBatch(): Promise<number> {
    const sent = await postMessages(stack, tenant.token, {
      recipients: numbers(2),
      message: 'Later',
      send_at: anHourAhead(),
    });
    expect(sent.statusCode, sent.body).toBe(202);
    return sent.json().data.message.id;
  }

  it('writes a console member, an operator and an API key as the actor, each once', async () => {
    const byMember = await scheduledBatch();
    const byOperator = await scheduledBatch();
    const byKey = await scheduledBatch();

    const first = await cancelCampaign(deps(), member(), tenant.workspaceId, byMember);
    expect(first.alreadyCanceled).toBe(false);
    // A second cancel changes nothing, and writes nothing.
    const again = await cancelCampaign(deps(), member(), tenant.workspaceId, byMember);
    expect(again.alreadyCanceled).toBe(true);
    expect(await auditOf('campaign.canceled', `campaign #${byMember}`)).toEqual([
      {
        actor: `dev@${tenant.slug}.test`,
        source: 'console',
        details: settled,
        address: '203.0.113.7',
        userAgent: 'save-campaign test',
        origin: null,
        userId: tenant.userId,
      },
    ]);

    const cli = await campaignCancel(stack.admin, {
      workspace: tenant.slug,
      id: String(byOperator),
    });
    expect(cli.json).toMatchObject({ id: byOperator, status: 'canceled' });
    const { user, host } = operatorActor() as { user: string; host: string };
    expect(await auditOf('campaign.canceled', `campaign #${byOperator}`)).toEqual([
      {
        actor: user,
        source: 'cli',
        details: settled,
        address: null,
        userAgent: null,
        origin: `cli@${host}`,
        userId: null,
      },
    ]);

    const rest = await stack.app.inject({
      method: 'POST',
      url: `/api/v1/messages/${byKey}/cancel`,
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(rest.statusCode, rest.body).toBe(200);
    expect(await auditOf('campaign.canceled', `campaign #${byKey}`)).toEqual([
      {
        actor: `API key ${tenant.token.slice(0, 'hld_'.length + 8)}`,
        source: 'api',
        details: settled,
        address: '127.0.0.1',
        userAgent: null,
        origin: null,
        userId: null,
      },
    ]);
  });

  it('writes nothing for a cancel refused', async () => {
    await expect(cancelCampaign(deps(), member(), tenant.workspaceId, 999_999_999)).rejects.toThrow(
      'Campaign 999999999 was not found.',
    );
    expect(await auditOf('campaign.canceled', 'campaign #999999999')).toEqual([]);
  });
});

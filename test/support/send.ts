/**
 * Helpers for tests of POST /api/v1/messages against the real stack: sending, looking up,
 * waiting for a campaign, reading simulator inboxes and registering simulators as providers.
 */
import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import { dispatchCampaign } from '../../commands/messaging/dispatch-campaign.js';
import { insertCampaign, type NewCampaign } from '../../db/campaigns.js';
import { insertProvider } from '../../db/providers.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import type { Stack } from './stack.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const issued = new Set<string>();
/**
 * Distinct valid Australian mobile numbers (+6142 and 7 random digits), so tests never read
 * each other's inbox. send-messages.test.ts draws from +6141, so the two files never collide.
 */
export function numbers(count: number): string[] {
  const result: string[] = [];
  while (result.length < count) {
    const number = `+6142${String(randomInt(10_000_000)).padStart(7, '0')}`;
    if (issued.has(number)) continue;
    issued.add(number);
    result.push(number);
  }
  return result;
}

/** POST /api/v1/messages with `body` as JSON text (any JSON value), or with no body at all. */
export function postMessages(stack: Stack, token: string, body: unknown) {
  return stack.app.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

export interface CampaignMessage {
  id: number;
  reference: string | null;
  status: string;
  total_recipients: number;
  queued_count: number;
  sent_count: number;
  failed_count: number;
  canceled_count: number;
  delivered_count: number;
  undelivered_count: number;
  created_at: string;
  scheduled_at: string | null;
  completed_at: string | null;
}

export async function lookup(stack: Stack, token: string, id: number): Promise<CampaignMessage> {
  const response = await stack.app.inject({
    method: 'GET',
    url: `/api/v1/messages/${id}`,
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.statusCode).toBe(200);
  return response.json().data.message;
}

export async function waitForCompletion(
  stack: Stack,
  token: string,
  id: number,
): Promise<CampaignMessage> {
  await expect
    .poll(async () => (await lookup(stack, token, id)).status, { timeout: 30_000, interval: 100 })
    .toBe('completed');
  return lookup(stack, token, id);
}

/** The exact 202 body of a confirmed send (docs/spec.md §4.1, §2.1, §2.2); ids and times vary. */
export function queuedResponse(expected: {
  total: number;
  requested?: number;
  excluded?: number;
  reference?: string | null;
}) {
  return {
    message: 'Messages queued for sending.',
    data: {
      message: {
        id: expect.any(Number),
        reference: expected.reference ?? null,
        status: 'queued',
        total_recipients: expected.total,
        queued_count: expected.total,
        sent_count: 0,
        failed_count: 0,
        canceled_count: 0,
        delivered_count: 0,
        undelivered_count: 0,
        created_at: expect.stringMatching(ISO),
        scheduled_at: null,
        completed_at: null,
      },
      queue: {
        success: true,
        campaign_id: expect.any(Number),
        batch_id: expect.stringMatching(UUID),
        total_recipients: expected.total,
        requested_recipients: expected.requested ?? expected.total,
        excluded_recipients: expected.excluded ?? 0,
        message: `${expected.total} ${expected.total === 1 ? 'message' : 'messages'} queued for sending.`,
      },
    },
  };
}

/** Sends, asserts the exact 202 body, and returns the campaign id. */
export async function sendQueued(
  stack: Stack,
  token: string,
  body: Record<string, unknown>,
  expected: Parameters<typeof queuedResponse>[0],
): Promise<number> {
  const response = await postMessages(stack, token, body);
  expect(response.statusCode).toBe(202);
  const json = response.json();
  expect(json).toEqual(queuedResponse(expected));
  expect(json.data.queue.campaign_id).toBe(json.data.message.id);
  return json.data.message.id;
}

/** The validation body (docs/spec.md §2.4) for a single failing field. */
export function invalid(field: string, message: string) {
  return { message, errors: { [field]: [message] } };
}

export interface InboxMessage {
  id: string;
  to: string;
  from: string | null;
  body: string;
  reference: string;
  received_at: string;
}

export async function inbox(simulatorUrl: string, to: string): Promise<InboxMessage[]> {
  const response = await fetch(`${simulatorUrl}/v1/inbox?to=${encodeURIComponent(to)}`);
  return ((await response.json()) as { messages: InboxMessage[] }).messages;
}

export async function setBehaviour(simulatorUrl: string, rule: Record<string, unknown>) {
  const response = await fetch(`${simulatorUrl}/v1/behaviour`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  expect(response.status).toBe(200);
}

/** A simulator of its own, registered as a workspace provider under `slug`. */
export async function simulatorProvider(
  stack: Stack,
  workspaceId: number,
  slug: string,
  options: {
    requiresSenderId?: boolean;
    behaviour?: Record<string, unknown>;
    messagesPerSecond?: number;
  } = {},
): Promise<RunningSimulator> {
  const simulator = await startSimulator({ port: 0 });
  if (options.behaviour) await setBehaviour(simulator.url, options.behaviour);
  await insertProvider(stack.sql, {
    workspaceId,
    slug,
    name: slug,
    type: 'simulator',
    requiresSenderId: options.requiresSenderId ?? false,
    messagesPerSecond: options.messagesPerSecond ?? null,
    settings: { base_url: simulator.url },
  });
  return simulator;
}

export interface MessageRow {
  seq: number;
  recipient: string;
  status: string;
  providerSlug: string | null;
  providerMessageId: string | null;
  error: string | null;
  deliveryStatus: string | null;
  deliveryErrorCode: string | null;
  deliveredAt: Date | null;
}

export function messageRows(stack: Stack, campaignId: number): Promise<MessageRow[]> {
  return stack.sql<MessageRow[]>`
    select seq, recipient, status, provider_slug, provider_message_id, error,
           delivery_status, delivery_error_code, delivered_at
    from campaign_messages where campaign_id = ${campaignId} order by seq`;
}

type DirectCampaign = Pick<NewCampaign, 'body' | 'providerSlug' | 'recipients'> &
  Partial<Pick<NewCampaign, 'purpose' | 'validityHours' | 'sendAt'>>;

/**
 * Saves a direct transactional campaign (unless `purpose` says otherwise), not dispatched. Saved
 * without a workflow id, as campaigns were before they had one, so that the workers' sweeper of
 * paused campaigns leaves it to the test (its dispatch then runs under `id-<campaign>`).
 */
export async function saveDirectCampaign(
  stack: Stack,
  workspaceId: number,
  campaign: DirectCampaign,
  /** Runs in the save's transaction, as a REST send's ties do. */
  alongside?: Parameters<typeof insertCampaign>[2],
): Promise<number> {
  const { id } = await insertCampaign(
    stack.sql,
    {
      workspaceId,
      apiKeyId: null,
      reference: null,
      purpose: 'transactional',
      senderId: null,
      routingType: 'direct',
      failoverRouteSlug: null,
      ...campaign,
    },
    alongside,
  );
  return id;
}

/**
 * Saves a direct campaign without dispatching it, lets `prepare` put it in the state under test
 * (an interrupted attempt, an ended validity period), then starts its workflow.
 */
export async function dispatchPrepared(
  stack: Stack,
  workspaceId: number,
  campaign: DirectCampaign,
  prepare: (campaignId: number) => Promise<unknown>,
): Promise<number> {
  const id = await saveDirectCampaign(stack, workspaceId, campaign);
  await prepare(id);
  const { confirmed } = await dispatchCampaign(stack, { workspaceId, campaignId: id });
  expect(confirmed).toBe(true);
  return id;
}

/** A batch's counters in the reporting table (what the MCP tools read). */
export async function reportCounts(stack: Stack, campaignId: number) {
  const [row] = await stack.sql<
    { sent: number; failedToSend: number; delivered: number; deliveryFailed: number }[]
  >`
    select sent, failed_to_send, delivered, delivery_failed
    from report_batches where campaign_id = ${campaignId}`;
  return row;
}

/**
 * Leaves messages as an attempt that died mid-submission leaves them: attempted on `provider`,
 * outcome unknown, the attempt's lease long gone.
 */
export async function markInterrupted(
  stack: Pick<Stack, 'sql'>,
  campaignId: number,
  seqs: number[],
  provider: string,
) {
  await stack.sql`
    update campaign_messages set attempt_provider = ${provider}, attempt_started_at = now()
    where campaign_id = ${campaignId} and seq = any(${seqs}) and status = 'queued'`;
}

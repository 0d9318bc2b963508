import { rememberInboxSecrets } from './secrets.js';
import type { ChaosStack } from './stack.js';

/**
 * Counting where the user would: the simulator's inbox (what each phone received), against
 * Herald's own rows. Every campaign a scenario sends has a body of its own, so a message in the
 * inbox belongs to the campaign whose body it carries whatever reference it was sent under.
 */

export interface InboxMessage {
  to: string;
  body: string;
  reference: string | null;
  received_at: string;
}

export async function readInbox(simulatorUrl: string): Promise<InboxMessage[]> {
  const response = await fetch(`${simulatorUrl}/v1/inbox`, { signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`GET /v1/inbox answered ${response.status}`);
  const { messages } = (await response.json()) as { messages: InboxMessage[] };
  rememberInboxSecrets(messages.map((message) => message.body));
  return messages;
}

export async function clearInbox(simulatorUrl: string): Promise<void> {
  await fetch(`${simulatorUrl}/v1/inbox`, { method: 'DELETE' });
}

/** Merged onto the simulator's rule for `prefix` (providers/simulator/README.md). */
export async function setBehaviour(simulatorUrl: string, rule: Record<string, unknown>) {
  const response = await fetch(`${simulatorUrl}/v1/behaviour`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  if (!response.ok) throw new Error(`POST /v1/behaviour answered ${response.status}`);
}

export interface CampaignAudit {
  /** Campaigns of the workspace, orphans included. */
  campaigns: number;
  /** Distinct (recipient, message) pairs the workspace's campaigns asked for. */
  total: number;
  sent: number;
  failed: number;
  /** Canceled with their campaign before a submission claimed them (issue 27). */
  canceled: number;
  /** Still queued at the end: neither sent, failed nor canceled. */
  queued: number;
  /** Recipients that received the message more than once. */
  duplicated: number;
  /** Of those, how many got every copy under one reference (the same submission sent twice). */
  duplicated_same_reference: number;
  /** Recipients whose message is `sent` in Herald but who received nothing. */
  lost: number;
  /** Recipients whose message is `failed` in Herald but who received it (an unknown outcome). */
  failed_but_received: number;
  /** Recipients whose message is `canceled` in Herald but who received it. */
  canceled_but_received: number;
  /** Campaigns of a key other than the one the key points to (null: could not be read). */
  orphans: number | null;
  /** Keys with more than one campaign. */
  keys_with_several_campaigns: number;
  /** Why messages failed: the most common errors Herald recorded, with their counts. */
  failed_errors: Record<string, number>;
  examples: { duplicated: string[]; lost: string[] };
}

interface Row {
  campaign_id: number;
  body: string;
  recipient: string;
  status: string;
  error: string | null;
}

/**
 * Counts every campaign of the workspace against the inbox. A recipient's message counts as
 * sent when any of its rows is sent (an orphan's queued copy does not hide the real one).
 */
export async function auditCampaigns(
  stack: ChaosStack,
  workspaceId: number,
  inbox: InboxMessage[],
): Promise<CampaignAudit> {
  const { rows, campaigns, orphans, severalKeys } = await stack.withSql(async (sql) => {
    const rows = await sql<Row[]>`
      select m.campaign_id::int as campaign_id, c.body, m.recipient, m.status, m.error
      from campaign_messages m join campaigns c on c.id = m.campaign_id
      where c.workspace_id = ${workspaceId}`;
    const [count] = await sql<{ n: number }[]>`
      select count(*)::int as n from campaigns where workspace_id = ${workspaceId}`;
    // Every keyed send of the suite carries its key as the campaign's reference.
    const orphans = await sql<{ n: number }[]>`
      select count(*)::int as n from campaigns c
      where c.workspace_id = ${workspaceId} and c.reference is not null
        and not exists (
          select 1 from idempotency_keys k
          where k.workspace_id = c.workspace_id and k.key = c.reference
            and k.resource_id = c.id::text)`.then(
      ([row]) => row?.n ?? 0,
      () => null,
    );
    const [several] = await sql<{ n: number }[]>`
      select count(*)::int as n from (
        select reference from campaigns
        where workspace_id = ${workspaceId} and reference is not null
        group by reference having count(*) > 1) k`;
    return { rows, campaigns: count?.n ?? 0, orphans, severalKeys: several?.n ?? 0 };
  });

  const received = new Map<string, InboxMessage[]>();
  for (const message of inbox) {
    const pair = `${message.to}\n${message.body}`;
    received.set(pair, [...(received.get(pair) ?? []), message]);
  }
  const statusByPair = new Map<string, string>();
  const rank: Record<string, number> = { sent: 3, failed: 2, canceled: 2, queued: 1 };
  for (const row of rows) {
    const pair = `${row.recipient}\n${row.body}`;
    const before = statusByPair.get(pair);
    if (!before || (rank[row.status] ?? 0) > (rank[before] ?? 0))
      statusByPair.set(pair, row.status);
  }

  const audit: CampaignAudit = {
    campaigns,
    total: statusByPair.size,
    sent: 0,
    failed: 0,
    canceled: 0,
    queued: 0,
    duplicated: 0,
    duplicated_same_reference: 0,
    lost: 0,
    failed_but_received: 0,
    canceled_but_received: 0,
    orphans,
    keys_with_several_campaigns: severalKeys,
    failed_errors: commonErrors(rows),
    examples: { duplicated: [], lost: [] },
  };
  for (const [pair, status] of statusByPair) {
    const copies = received.get(pair) ?? [];
    const recipient = pair.split('\n')[0] as string;
    if (status === 'sent') audit.sent++;
    else if (status === 'failed') audit.failed++;
    else if (status === 'canceled') audit.canceled++;
    else audit.queued++;
    if (copies.length > 1) {
      audit.duplicated++;
      if (new Set(copies.map((copy) => copy.reference)).size === 1)
        audit.duplicated_same_reference++;
      if (audit.examples.duplicated.length < 3)
        audit.examples.duplicated.push(
          `${recipient}: ${copies.map((copy) => copy.reference).join(', ')}`,
        );
    }
    if (copies.length === 0 && status === 'sent') {
      audit.lost++;
      if (audit.examples.lost.length < 3) audit.examples.lost.push(recipient);
    }
    if (copies.length > 0 && status === 'failed') audit.failed_but_received++;
    if (copies.length > 0 && status === 'canceled') audit.canceled_but_received++;
  }
  return audit;
}

export interface OtpAudit {
  requests: number;
  by_status: Record<string, number>;
  /** Recipients that received more codes than requests were made for them. */
  duplicated: number;
  /** Recipients that received fewer codes than Herald counts accepted. */
  lost: number;
}

/** Every OTP request of the workspace goes to a recipient of its own in the scenarios. */
export async function auditOtps(
  stack: ChaosStack,
  workspaceId: number,
  inbox: InboxMessage[],
): Promise<OtpAudit> {
  const requests = await stack.withSql(
    (sql) => sql<{ recipient: string; status: string }[]>`
      select recipient, status from otp_requests where workspace_id = ${workspaceId}`,
  );
  const codes = new Map<string, number>();
  for (const message of inbox) {
    if (/code/i.test(message.body) && /\d{6}/.test(message.body))
      codes.set(message.to, (codes.get(message.to) ?? 0) + 1);
  }
  const audit: OtpAudit = { requests: requests.length, by_status: {}, duplicated: 0, lost: 0 };
  const perRecipient = new Map<string, { requests: number; accepted: number }>();
  for (const request of requests) {
    audit.by_status[request.status] = (audit.by_status[request.status] ?? 0) + 1;
    const counts = perRecipient.get(request.recipient) ?? { requests: 0, accepted: 0 };
    counts.requests++;
    if (request.status === 'accepted') counts.accepted++;
    perRecipient.set(request.recipient, counts);
  }
  for (const [recipient, counts] of perRecipient) {
    const received = codes.get(recipient) ?? 0;
    if (received > counts.requests) audit.duplicated++;
    if (received < counts.accepted) audit.lost++;
  }
  return audit;
}

/** The five most common errors of failed rows, digits blurred so that one cause counts once. */
function commonErrors(rows: Row[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const row of rows) {
    if (row.status !== 'failed') continue;
    const error = (row.error ?? 'no error recorded').replace(/\d+/g, 'N').slice(0, 160);
    counts.set(error, (counts.get(error) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).slice(0, 5));
}

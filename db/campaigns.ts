import type { CampaignStatus } from '../domain/campaign-status.js';
import { maskedNumber } from '../domain/phone.js';
import type { Sql, TransactionSql } from './client.js';
import { reserveDailySegments } from './fraud-guard.js';

export interface CampaignView {
  id: number;
  reference: string | null;
  status: CampaignStatus;
  totalRecipients: number;
  queuedCount: number;
  sentCount: number;
  failedCount: number;
  canceledCount: number;
  /** Sent messages whose receipt said delivered, or undelivered. */
  deliveredCount: number;
  undeliveredCount: number;
  createdAt: Date;
  /** When a scheduled campaign is (or was) sent; null for one sent at once. */
  scheduledAt: Date | null;
  completedAt: Date | null;
}

/** A campaign's counters, from its message rows `m`. */
const messageCounts = (sql: Sql) => sql`
  (count(*) filter (where m.status = 'queued'))::int as queued_count,
  (count(*) filter (where m.status = 'sent'))::int as sent_count,
  (count(*) filter (where m.status = 'failed'))::int as failed_count,
  (count(*) filter (where m.status = 'canceled'))::int as canceled_count,
  (count(*) filter (where m.status = 'sent' and m.delivery_status = 'delivered'))::int
    as delivered_count,
  (count(*) filter (where m.status = 'sent' and m.delivery_status = 'undelivered'))::int
    as undelivered_count`;

/** A campaign of this workspace with counters derived from its message rows. */
export async function findCampaignView(
  sql: Sql,
  workspaceId: number,
  campaignId: number,
): Promise<CampaignView | undefined> {
  return (await findCampaignViewAndDispatchInfo(sql, workspaceId, campaignId))?.view;
}

/**
 * A campaign's view and what its workflow start needs, in one read: the send answers with the
 * first and dispatches with the second.
 */
export async function findCampaignViewAndDispatchInfo(
  sql: Sql,
  workspaceId: number,
  campaignId: number,
): Promise<{ view: CampaignView; dispatch: CampaignDispatchInfo } | undefined> {
  const [row] = await sql<
    (CampaignView & Omit<CampaignDispatchInfo, 'id' | 'reference' | 'messages'>)[]
  >`
    select c.id, c.reference, c.status, c.created_at, c.scheduled_at, c.completed_at,
           c.batch_id, c.requested_recipients, c.excluded_recipients, c.purpose, c.workflow_id,
           count(m.seq)::int as total_recipients,
           ${messageCounts(sql)}
    from campaigns c
    left join campaign_messages m on m.campaign_id = c.id
    where c.id = ${campaignId} and c.workspace_id = ${workspaceId}
    group by c.id`;
  if (!row) return undefined;
  const { batchId, requestedRecipients, excludedRecipients, purpose, workflowId, ...view } = row;
  const { scheduledAt } = view;
  return {
    view,
    dispatch: {
      id: row.id,
      reference: row.reference,
      batchId,
      requestedRecipients,
      excludedRecipients,
      messages: view.totalRecipients,
      purpose,
      workflowId,
      scheduledAt,
    },
  };
}

export interface NewCampaign {
  workspaceId: number;
  /** Null for a campaign an operator starts (`herald campaign create`). */
  apiKeyId: number | null;
  /** How the batch was created; `api` when omitted (REST sends). */
  source?: 'api' | 'quick_send' | 'campaign';
  /** Named campaigns only; REST sends have none. */
  name?: string | null;
  reference: string | null;
  purpose: 'transactional' | 'marketing';
  body: string;
  senderId: string | null;
  routingType: 'direct' | 'failover';
  providerSlug: string | null;
  failoverRouteSlug: string | null;
  recipients: string[];
  /** When to send it; unset: at once. */
  sendAt?: Date | null;
  /**
   * Messages not submitted within this many hours (of `sendAt` when given) are failed
   * (MESSAGE_VALIDITY_HOURS; 24).
   */
  validityHours?: number;
  /** Segments per message as sent (domain/segments.ts campaignSegments). */
  segments?: number;
  /**
   * A personalised campaign: each recipient's own text (`body` keeps the template) and its
   * segments, stored on its message row (0035). Unset: every recipient gets `body`.
   */
  personalized?: ReadonlyMap<string, PersonalizedText>;
  /**
   * The workflow that runs (or will run) the campaign, recorded when it is saved: a campaign is
   * never without the name its dispatch, a retry or `campaign resume` continues under. Left out
   * only by tests and benchmarks that never dispatch.
   */
  workflowIdOf?: (campaignId: number) => string;
  /** The workspace's daily cap: the campaign's segments fit under it whole, or it is refused. */
  dailyCap?: DailyCap | null;
  /**
   * A marketing send's recipients in their keyed-hash form, each mapped to its number
   * (security/recipient-hash.ts): an erased number's opt-out is stored so, and still holds.
   */
  erasedOptOuts?: ReadonlyMap<string, string>;
}

export interface DailyCap {
  segments: number;
  nearPercent: number;
}

/** The campaign's segments would take the workspace past its daily cap: nothing was saved. */
export class DailyCapReachedError extends Error {
  constructor(readonly cap: number) {
    super(`The daily cap of ${cap} segments would be exceeded.`);
  }
}

/** A campaign as its save left it: what the send answers with, and what its dispatch needs. */
export interface SavedCampaign {
  id: number;
  view: CampaignView;
  dispatch: CampaignDispatchInfo;
}

export interface PersonalizedText {
  body: string;
  segments: number;
}

/** The personalised texts of `recipients`, in their order, as two columns. */
function personalizedColumns(
  personalized: ReadonlyMap<string, PersonalizedText>,
  recipients: readonly string[],
): { bodies: string[]; segments: number[] } {
  const texts = recipients.map((recipient) => {
    const text = personalized.get(recipient);
    if (!text) throw new Error('a personalised campaign has a text for every recipient');
    return text;
  });
  return { bodies: texts.map((text) => text.body), segments: texts.map((text) => text.segments) };
}

/** The segments a campaign's messages take: each personalised text counted on its own. */
function totalSegments(input: NewCampaign, recipients: readonly string[]): number {
  const { personalized } = input;
  if (!personalized) return (input.segments ?? 1) * recipients.length;
  return personalizedColumns(personalized, recipients).segments.reduce((sum, n) => sum + n, 0);
}

/** The message rows of a campaign: recipients, and each one's own text when personalised. */
function messageRows(tx: TransactionSql, id: number, input: NewCampaign, recipients: string[]) {
  if (!input.personalized)
    return tx`
      insert into campaign_messages (campaign_id, seq, recipient)
      select ${id}, ordinality, recipient from unnest(${recipients}::text[]) with ordinality as r(recipient, ordinality)`;
  const { bodies, segments } = personalizedColumns(input.personalized, recipients);
  return tx`
    insert into campaign_messages (campaign_id, seq, recipient, body, segments)
    select ${id}, ordinality, recipient, body, segments
    from unnest(${recipients}::text[], ${bodies}::text[], ${segments}::int[])
      with ordinality as r(recipient, body, segments, ordinality)`;
}

/** A new campaign's id, drawn from its identity's sequence before the campaign is written. */
async function nextCampaignId(sql: Sql): Promise<number> {
  const [row] = await sql<{ id: number }[]>`
    select nextval(pg_get_serial_sequence('campaigns', 'id')) as id`;
  return Number(row?.id);
}

/**
 * Saves the campaign (paused until its dispatch is confirmed) and one row per recipient;
 * marketing sends leave out the workspace's opted-out numbers. `alongside` runs in the same
 * transaction once the campaign has its id, as its last step (the REST send ties it to its
 * Idempotency-Key there): if it throws, nothing is saved. `committing` is told once only the
 * commit is left; it too may still refuse. `making` may still be settling (its routing being
 * read): the campaign's id is drawn meanwhile.
 */
export async function insertCampaign(
  sql: Sql,
  making: NewCampaign | Promise<NewCampaign>,
  alongside?: (tx: TransactionSql, campaign: { id: number }) => Promise<void>,
  committing?: (campaign: { id: number }) => void,
): Promise<SavedCampaign> {
  // Its id is drawn beside the routing's reads (never inside the transaction: a transaction
  // waiting for another connection could starve the pool), so the save writes in one round trip.
  const [input, id] = await Promise.all([making, nextCampaignId(sql)]);
  return sql.begin(async (tx) => {
    const erased = input.erasedOptOuts ?? new Map<string, string>();
    const erasedNumbers = new Set<string>();
    const optedOut =
      input.purpose === 'marketing'
        ? new Set(
            (
              await tx<{ recipient: string }[]>`
                select recipient from opt_outs
                where workspace_id = ${input.workspaceId}
                  and recipient = any(${[...input.recipients, ...erased.keys()]})`
            ).map((row) => {
              const number = erased.get(row.recipient);
              if (number === undefined) return row.recipient;
              erasedNumbers.add(number);
              return number;
            }),
          )
        : new Set<string>();
    const recipients = input.recipients.filter((recipient) => !optedOut.has(recipient));
    // Numbers left out are kept too, so the recipient listing shows them `excluded`; one whose
    // opt-out was erased (matched by its keyed hash) only in its masked form (0034).
    const excluded = input.recipients
      .filter((recipient) => optedOut.has(recipient))
      .map((recipient) => (erasedNumbers.has(recipient) ? maskedNumber(recipient) : recipient));
    const cap = input.dailyCap;
    const workflowId = input.workflowIdOf?.(id) ?? null;
    // Everything in one round trip: Postgres runs a connection's statements in the order sent,
    // so the messages follow their campaign, and `alongside` (sent last) sees them all.
    const inserted = tx<{ createdAt: Date; batchId: string }[]>`
      insert into campaigns (id, workspace_id, api_key_id, source, name, reference, purpose, body,
                             sender_id, routing_type, provider_slug, failover_route_slug, status,
                             requested_recipients, excluded_recipients, scheduled_at, valid_until,
                             segments, workflow_id)
      overriding system value
      values (${id}, ${input.workspaceId}, ${input.apiKeyId}, ${input.source ?? 'api'},
              ${input.name ?? null}, ${input.reference}, ${input.purpose},
              ${input.body}, ${input.senderId}, ${input.routingType}, ${input.providerSlug},
              ${input.failoverRouteSlug}, 'paused', ${input.recipients.length}, ${optedOut.size},
              ${input.sendAt ?? null},
              coalesce(${input.sendAt ?? null}::timestamptz, now())
                + make_interval(hours => ${input.validityHours ?? 24}),
              ${input.segments ?? null}, ${workflowId})
      returning created_at, batch_id`.execute();
    const withinCap =
      !cap || recipients.length === 0
        ? true
        : reserveDailySegments(tx, {
            workspaceId: input.workspaceId,
            segments: totalSegments(input, recipients),
            cap: cap.segments,
            nearPercent: cap.nearPercent,
          });
    const written = [
      messageRows(tx, id, input, recipients).execute(),
      excluded.length > 0
        ? tx`
            insert into campaign_exclusions (campaign_id, seq, recipient, reason)
            select ${id}, ${recipients.length} + ordinality, recipient, 'opted_out'
            from unnest(${excluded}::text[]) with ordinality as r(recipient, ordinality)`.execute()
        : undefined,
    ];
    const [[campaign], held] = await Promise.all([
      inserted,
      withinCap,
      ...written,
      alongside?.(tx, { id }),
    ]);
    // Refused after `alongside` was sent: the transaction rolls back all of it.
    if (cap && !held) throw new DailyCapReachedError(cap.segments);
    committing?.({ id });
    const { createdAt, batchId } = campaign as { createdAt: Date; batchId: string };
    return {
      id,
      view: {
        id,
        reference: input.reference,
        status: 'paused',
        totalRecipients: recipients.length,
        queuedCount: recipients.length,
        sentCount: 0,
        failedCount: 0,
        canceledCount: 0,
        deliveredCount: 0,
        undeliveredCount: 0,
        createdAt,
        scheduledAt: input.sendAt ?? null,
        completedAt: null,
      },
      dispatch: {
        id,
        batchId,
        requestedRecipients: input.recipients.length,
        excludedRecipients: optedOut.size,
        messages: recipients.length,
        reference: input.reference,
        purpose: input.purpose,
        workflowId,
        scheduledAt: input.sendAt ?? null,
      },
    };
  });
}

/** The campaign's status now. */
export async function recordDispatch(
  sql: Sql | TransactionSql,
  campaignId: number,
  workflowId: string,
): Promise<string | undefined> {
  const [row] = await sql<{ status: string }[]>`
    update campaigns set workflow_id = ${workflowId},
      status = case
        when status <> 'paused' then status
        when scheduled_at > now() then 'scheduled'
        else 'queued' end
    where id = ${campaignId}
    returning status`;
  return row?.status;
}

/**
 * Paused campaigns saved over `savedSecondsAgo` ago that have a workflow id to dispatch under,
 * oldest first: what the workers' dispatch sweeper takes up (campaigns_paused_idx).
 */
export async function findPausedCampaigns(
  sql: Sql,
  { savedSecondsAgo, limit }: { savedSecondsAgo: number; limit: number },
): Promise<{ id: number; workspaceId: number }[]> {
  return sql<{ id: number; workspaceId: number }[]>`
    select id, workspace_id from campaigns
    where status = 'paused' and workflow_id is not null
      and created_at < now() - make_interval(secs => ${savedSecondsAgo})
    order by id
    limit ${limit}`;
}

export interface CampaignDispatchInfo {
  id: number;
  batchId: string;
  requestedRecipients: number;
  excludedRecipients: number;
  /** Messages saved: what its workflow submits. */
  messages: number;
  reference: string | null;
  purpose: string;
  /** Recorded when the campaign was saved; null only for campaigns saved before that. */
  workflowId: string | null;
  /** When to send it (`send_at`); null: at once. */
  scheduledAt: Date | null;
}

export async function findCampaignDispatchInfo(
  sql: Sql,
  campaignId: number,
): Promise<CampaignDispatchInfo> {
  const [row] = await sql<CampaignDispatchInfo[]>`
    select id, batch_id, requested_recipients, excluded_recipients, reference, purpose, workflow_id,
      scheduled_at,
      (select count(*)::int from campaign_messages where campaign_id = c.id) as messages
    from campaigns c where id = ${campaignId}`;
  if (!row) throw new Error(`campaign ${campaignId} does not exist`);
  return row;
}

export interface CampaignOrigin {
  id: number;
  name: string | null;
  source: 'api' | 'quick_send' | 'campaign' | null;
  status: CampaignView['status'];
}

/** How a campaign of this workspace was created and where it stands. */
export async function findCampaignOrigin(
  sql: Sql,
  workspaceId: number,
  campaignId: number,
): Promise<CampaignOrigin | undefined> {
  const [row] = await sql<CampaignOrigin[]>`
    select id, name, source, status from campaigns
    where id = ${campaignId} and workspace_id = ${workspaceId}`;
  return row;
}

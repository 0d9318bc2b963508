import { type Answer, call, type Tenant } from './api.js';
import type { InboxMessage } from './audit.js';
import type { ChaosStack } from './stack.js';
import { sleep, tally } from './timing.js';

/**
 * Sends made the way a client reads Herald's answers, most of them without an Idempotency-Key,
 * and the count, per send, of what each recipient received. Every send has a body of its own,
 * so a copy at the inbox belongs to the send whatever campaign carried it.
 */

export interface LogicalSend {
  label: string;
  request: { recipients: string[]; message: string; reference?: string };
  /** Sent under this Idempotency-Key (the request's `reference` too); none for a keyless send. */
  key?: string;
}

export interface SendOutcome {
  /** The campaign the send ended with: its 202's, or the one a 503 named and the lookup found. */
  campaignId: number | null;
  /** `queued`/`paused`: answered 202 so; `found`: looked up after a 503 that said it may be saved. */
  end: 'queued' | 'paused' | 'found' | 'refused' | 'gave-up';
  answers: Answer[];
  lookups: Answer[];
  /** 503s that said a campaign may have been saved without saying which (nothing to look up). */
  uncertainWithoutId: number;
}

/** What the answer invites a client to wait before asking again. */
function waitInvited(answer: Answer): number {
  const seconds = Number(answer.retryAfter);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 10) * 1000 : 2_000;
}

/**
 * The campaign a 503 says may have been saved: its id, null when it names none, undefined
 * when the answer does not say that anything may have been saved (a plain refusal).
 */
export function campaignMaybeSaved(answer: Answer): number | null | undefined {
  if (answer.status !== 503 || typeof answer.body !== 'object' || answer.body === null)
    return undefined;
  const body = answer.body;
  const message = String(body.message ?? '');
  const named =
    body.data?.message?.id ??
    body.data?.queue?.campaign_id ??
    body.data?.campaign_id ??
    body.campaign_id ??
    /campaign (\d+)/i.exec(message)?.[1];
  if (named !== undefined && named !== null) return Number(named);
  if (/saved/i.test(message) && !/nothing (was|has been) saved|not (been )?saved/i.test(message))
    return null;
  return undefined;
}

/**
 * One send, as its answers invite: 202 (queued or paused) ends it; a 503 is waited out
 * (Retry-After) and the same send made again, after looking the campaign up if the 503 says
 * one may have been saved (again only when the lookup answers 404); a 500, a timeout or a
 * network error is retried after 2 s like a 503 (the checks count them).
 */
export async function sendAsInvited(
  apiUrls: string[],
  tenant: Tenant,
  send: LogicalSend,
  deadlineMs = 150_000,
): Promise<SendOutcome> {
  const outcome: SendOutcome = {
    campaignId: null,
    end: 'gave-up',
    answers: [],
    lookups: [],
    uncertainWithoutId: 0,
  };
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const answer = await call(
      apiUrls[attempt % apiUrls.length] as string,
      'POST',
      '/api/v1/messages',
      {
        token: tenant.token,
        key: send.key,
        body: send.request,
        timeoutMs: 30_000,
      },
    );
    outcome.answers.push(answer);
    if (answer.status === 202) {
      outcome.campaignId = answer.body.data.message.id as number;
      outcome.end = answer.body.data.queue?.success === true ? 'queued' : 'paused';
      return outcome;
    }
    if (typeof answer.status === 'number' && answer.status >= 400 && answer.status < 500) {
      if (answer.status !== 429) {
        outcome.end = 'refused';
        return outcome;
      }
    }
    await sleep(waitInvited(answer));
    const maybe = campaignMaybeSaved(answer);
    if (maybe === null) outcome.uncertainWithoutId++;
    if (typeof maybe === 'number') {
      const found = await lookUp(apiUrls, tenant, maybe, deadline, outcome.lookups);
      if (found === true) {
        outcome.campaignId = maybe;
        outcome.end = 'found';
        return outcome;
      }
      if (found === undefined) return outcome;
    }
  }
  return outcome;
}

/** true: the campaign exists; false: 404; undefined: no answer either way by the deadline. */
async function lookUp(
  apiUrls: string[],
  tenant: Tenant,
  id: number,
  deadline: number,
  lookups: Answer[],
): Promise<boolean | undefined> {
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const answer = await call(
      apiUrls[attempt % apiUrls.length] as string,
      'GET',
      `/api/v1/messages/${id}`,
      {
        token: tenant.token,
        timeoutMs: 30_000,
      },
    );
    lookups.push(answer);
    if (answer.status === 200) return true;
    if (answer.status === 404) return false;
    await sleep(waitInvited(answer));
  }
  return undefined;
}

export interface InboxBySend {
  recipients: number;
  received_once: number;
  /** Recipients of a send that received its message more than once. */
  duplicated: number;
  /** Recipients of a send that never received its message. */
  lost: number;
  examples: { duplicated: string[]; lost: string[] };
}

/** Each recipient of each send against the inbox: exactly one copy of the send's body. */
export function inboxBySend(inbox: InboxMessage[], sends: LogicalSend[]): InboxBySend {
  const copies = new Map<string, number>();
  for (const message of inbox) {
    const pair = `${message.to}\n${message.body}`;
    copies.set(pair, (copies.get(pair) ?? 0) + 1);
  }
  const audit: InboxBySend = {
    recipients: 0,
    received_once: 0,
    duplicated: 0,
    lost: 0,
    examples: { duplicated: [], lost: [] },
  };
  for (const send of sends) {
    for (const to of send.request.recipients) {
      audit.recipients++;
      const received = copies.get(`${to}\n${send.request.message}`) ?? 0;
      if (received === 1) audit.received_once++;
      if (received > 1) {
        audit.duplicated++;
        if (audit.examples.duplicated.length < 3)
          audit.examples.duplicated.push(`${to} × ${received} (${send.label})`);
      }
      if (received === 0) {
        audit.lost++;
        if (audit.examples.lost.length < 3) audit.examples.lost.push(`${to} (${send.label})`);
      }
    }
  }
  return audit;
}

export interface WorkspaceCampaigns {
  campaigns: number;
  by_status: Record<string, number>;
  /** Sends (told apart by body) with more than one campaign, and with none. */
  sends_with_several: number;
  sends_with_none: number;
  /** Campaigns not completed, with their status. */
  open: { id: number; status: string }[];
}

/** The workspace's campaigns of the sends (told apart by body), counted per send. */
export async function workspaceCampaigns(
  stack: ChaosStack,
  workspaceId: number,
  sends: LogicalSend[],
): Promise<WorkspaceCampaigns> {
  const rows = await stack.withSql(
    (sql) => sql<{ id: number; status: string; body: string }[]>`
      select id::int as id, status, body from campaigns where workspace_id = ${workspaceId}`,
  );
  const bodies = new Set(sends.map((send) => send.request.message));
  const ofSends = rows.filter((row) => bodies.has(row.body));
  const perBody = new Map<string, number>();
  for (const row of ofSends) perBody.set(row.body, (perBody.get(row.body) ?? 0) + 1);
  const counts = sends.map((send) => perBody.get(send.request.message) ?? 0);
  return {
    campaigns: ofSends.length,
    by_status: tally(ofSends.map((row) => row.status)),
    sends_with_several: counts.filter((n) => n > 1).length,
    sends_with_none: counts.filter((n) => n === 0).length,
    open: ofSends
      .filter((row) => row.status !== 'completed')
      .map((row) => ({ id: row.id, status: row.status })),
  };
}

/** Polls until every campaign of the workspace is completed; the time it took, or null. */
export async function untilWorkspaceCompleted(
  stack: ChaosStack,
  workspaceId: number,
  timeoutMs: number,
): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const open = await stack
      .withSql(
        async (sql) =>
          (
            await sql<{ n: number }[]>`
              select count(*)::int as n from campaigns
              where workspace_id = ${workspaceId} and status <> 'completed'`
          )[0]?.n,
      )
      .catch(() => undefined);
    if (open === 0) return Date.now() - started;
    await sleep(500);
  }
  return null;
}

/** Every answer of the sends, by status, and the slowest. */
export function answerFigures(outcomes: SendOutcome[]) {
  const answers = outcomes.flatMap((outcome) => outcome.answers);
  const lookups = outcomes.flatMap((outcome) => outcome.lookups);
  return {
    answers: tally(answers.map((answer) => answer.status)),
    first_answers: tally(outcomes.map((outcome) => outcome.answers[0]?.status ?? 'none')),
    ends: tally(outcomes.map((outcome) => outcome.end)),
    lookups: tally(lookups.map((answer) => answer.status)),
    uncertain_without_id: outcomes.reduce((sum, outcome) => sum + outcome.uncertainWithoutId, 0),
    max_answer_ms: Math.round(Math.max(0, ...answers.map((answer) => answer.ms))),
    /** Answers slower than the api's 5 s promise: status, ms, and which attempt of its send. */
    over_5s: outcomes.flatMap((outcome) =>
      outcome.answers
        .map((answer, attempt) => ({ status: answer.status, ms: Math.round(answer.ms), attempt }))
        .filter((answer) => answer.ms > 5_000),
    ),
    status_500: [...answers, ...lookups].filter((answer) => answer.status === 500).length,
  };
}

import type { RecordedReceipt } from './campaign-messages.js';
import type { Sql, TransactionSql } from './client.js';
import { type SettledSmppMessage, takePendingSmppReceipts } from './smpp-pending-receipts.js';

export type OtpStatus = 'pending' | 'accepted' | 'failed';
export type OtpOutcome = 'verified' | 'expired' | 'superseded' | 'failed';
export type BillingSource = 'credits' | 'connected_provider';

export interface NewOtpRequest {
  id: string;
  workspaceId: number;
  apiKeyId: number;
  userId: number | null;
  recipient: string;
  purpose: string;
  serviceSlug: string | null;
  bodyTemplate: string;
  segments: number;
  codeLength: number;
  senderId: string | null;
  providerSlug: string;
  expiresAt: Date;
  billingSource: BillingSource;
  workflowId: string;
}

export interface OtpRequestView {
  id: string;
  status: OtpStatus;
  expiresAt: Date;
  providerSlug: string;
  senderId: string | null;
  billingSource: BillingSource;
  outcome: OtpOutcome | null;
  creditsCharged: number;
  workflowId: string;
  purpose: string;
  codeLength: number;
}

export class InsufficientCreditsError extends Error {
  constructor(readonly needed: number) {
    super(`Insufficient credits: this send needs ${needed}.`);
  }
}

/**
 * Saves a request, charging credits when the service pays: one statement, so both happen or
 * neither (the send path's latency is its round trips).
 */
export async function insertOtpRequest(
  sql: Sql | TransactionSql,
  input: NewOtpRequest,
): Promise<void> {
  const charge = input.billingSource === 'credits' ? input.segments : 0;
  const [row] = await sql<{ inserted: boolean }[]>`
    with charged as (
      update workspaces set credit_balance = credit_balance - ${charge}
      where id = ${input.workspaceId} and credit_balance >= ${charge}
      returning id
    ), inserted as (
      insert into otp_requests (id, workspace_id, api_key_id, user_id, recipient, purpose,
        service_slug, body_template, segments, code_length, sender_id, provider_slug, expires_at,
        billing_source, workflow_id)
      select ${input.id}, ${input.workspaceId}, ${input.apiKeyId}, ${input.userId},
        ${input.recipient}, ${input.purpose}, ${input.serviceSlug}, ${input.bodyTemplate},
        ${input.segments}, ${input.codeLength}, ${input.senderId}, ${input.providerSlug},
        ${input.expiresAt}, ${input.billingSource},
        ${input.workflowId}
      from charged
      returning id
    ), ledger as (
      insert into credit_ledger (workspace_id, amount, reason, otp_request_id)
      select ${input.workspaceId}, ${-charge}, 'otp_charge', id from inserted where ${charge} > 0
    )
    select exists (select 1 from inserted) as inserted`;
  if (!row?.inserted) throw new InsufficientCreditsError(input.segments);
}

export async function findOtpRequestView(
  sql: Sql,
  workspaceId: number,
  id: string,
): Promise<OtpRequestView | undefined> {
  const [view] = await sql<OtpRequestView[]>`
    select r.id, r.status, r.expires_at, r.provider_slug, r.sender_id, r.billing_source, r.outcome,
      r.workflow_id, r.purpose, r.code_length,
      coalesce((select -sum(amount) from credit_ledger where otp_request_id = r.id), 0)::int
        as credits_charged
    from otp_requests r where r.workspace_id = ${workspaceId} and r.id = ${id}`;
  return view;
}

export interface OtpForSubmission {
  id: string;
  workspaceId: number;
  recipient: string;
  bodyTemplate: string;
  codeLength: number;
  senderId: string | null;
  providerSlug: string;
  status: OtpStatus;
  attemptStartedAt: Date | null;
  expiresAt: Date;
  expired: boolean;
}

export async function findOtpForSubmission(sql: Sql, id: string) {
  const [request] = await sql<OtpForSubmission[]>`
    select id, workspace_id, recipient, body_template, code_length, sender_id, provider_slug,
      status, attempt_started_at, expires_at, expires_at <= now() as expired
    from otp_requests where id = ${id}`;
  return request;
}

/**
 * Stores the code's hash and marks the attempt, before the code leaves Herald, returning what the
 * submission needs. Undefined when the request is not a fresh pending one (an earlier attempt's
 * outcome must be reconciled, never sent again) or has expired.
 */
export async function claimOtpAttempt(
  sql: Sql,
  id: string,
  codeLength: number,
  codeHash: Buffer,
): Promise<OtpForSubmission | undefined> {
  const [claimed] = await sql<OtpForSubmission[]>`
    update otp_requests set code_hash = ${codeHash}, attempt_started_at = now()
    where id = ${id} and attempt_started_at is null and status = 'pending'
      and code_length = ${codeLength} and expires_at > now()
    returning id, workspace_id, recipient, body_template, code_length, sender_id, provider_slug,
      status, attempt_started_at, expires_at, false as expired`;
  return claimed;
}

/**
 * Records the provider's acceptance and supersedes the subject's earlier codes (docs/spec.md §3): only a
 * code that went out replaces the previous one, so a send the provider refuses leaves the user's
 * earlier code working. Their runs read the supersession when their codes expire.
 */
export async function markOtpAccepted(sql: Sql, id: string, providerMessageId: string) {
  await sql.begin(async (tx) => {
    // Acceptances of one recipient's codes one at a time: two of them superseding each other's
    // rows in opposite orders would deadlock.
    await tx`
      select pg_advisory_xact_lock(hashtextextended('otp-accept:' || workspace_id || ':' || recipient, 0))
      from otp_requests where id = ${id}`;
    await tx`
    with accepted as (
      update otp_requests set status = 'accepted', provider_message_id = ${providerMessageId}
      where id = ${id} and status = 'pending'
      returning workspace_id, user_id, recipient, purpose, created_at
    )
    update otp_requests earlier set superseded_at = now()
    from accepted
    where earlier.workspace_id = accepted.workspace_id and earlier.recipient = accepted.recipient
      and earlier.purpose = accepted.purpose
      and earlier.user_id is not distinct from accepted.user_id
      and earlier.created_at < accepted.created_at and earlier.id <> ${id}
      and earlier.verified_at is null and earlier.superseded_at is null
      and earlier.expires_at > now()`;
    // A receipt an SMPP provider sent before the acceptance was recorded.
    const smpp = await tx<SettledSmppMessage[]>`
      select r.workspace_id, r.provider_slug, r.provider_message_id
      from otp_requests r
      join providers p on p.workspace_id = r.workspace_id and p.slug = r.provider_slug
        and p.type = 'smpp'
      where r.id = ${id} and r.status = 'accepted' and r.provider_message_id is not null`;
    const [receipt] = await takePendingSmppReceipts(tx, smpp);
    if (receipt && smpp[0])
      await recordOtpDelivery(tx, {
        requestId: id,
        provider: smpp[0].providerSlug,
        providerMessageId: smpp[0].providerMessageId,
        ...receipt,
      });
  });
}

/** Fails a pending request and refunds what it was charged, once. */
export async function markOtpFailed(sql: Sql, id: string, error: string) {
  await sql.begin(async (tx) => {
    const [failed] = await tx<{ workspaceId: number }[]>`
      update otp_requests set status = 'failed', error = ${error}
      where id = ${id} and status = 'pending'
      returning workspace_id`;
    if (!failed) return;
    const refunded = await tx<{ amount: number }[]>`
      insert into credit_ledger (workspace_id, amount, reason, otp_request_id)
      select workspace_id, -amount, 'otp_refund', otp_request_id from credit_ledger
      where otp_request_id = ${id} and reason = 'otp_charge'
      on conflict do nothing
      returning amount`;
    const amount = refunded[0]?.amount ?? 0;
    if (amount > 0) {
      await tx`
        update workspaces set credit_balance = credit_balance + ${amount}
        where id = ${failed.workspaceId}`;
    }
  });
}

/** Records how the workflow ended, from the request's state: verified, superseded or expired. */
export async function finishOtpRequest(sql: Sql, id: string): Promise<OtpOutcome> {
  const [row] = await sql<{ outcome: OtpOutcome }[]>`
    update otp_requests set outcome = case
        when status = 'failed' then 'failed'
        when verified_at is not null then 'verified'
        when superseded_at is not null then 'superseded'
        else 'expired' end
    where id = ${id}
    returning outcome`;
  return row?.outcome ?? 'failed';
}

/** `failed`: a wrong code or no usable request; `exhausted`: refused at the failure limit. */
export type VerificationOutcome = 'verified' | 'failed' | 'exhausted';

/**
 * One verification, atomically (migration 0032, herald_verify_otp_outcome): serialized per user and
 * recipient across requests and api replicas, so each counts the failures of all before it;
 * the request chosen by id, or the subject's latest usable one for the purpose, is marked
 * verified when its stored hash is one of `codeHashes` and it is usable and under the failure
 * limit; otherwise a failure is recorded. One round trip.
 */
export async function verifyOtpCode(
  sql: Sql,
  attempt: {
    workspaceId: number;
    userId: number | null;
    recipient: string;
    requestId: string | null;
    purpose: string | null;
    /** Keyed hashes of the submitted code under every key of the ring and both schemes. */
    codeHashes: readonly Buffer[];
    windowMinutes: number;
    maxFailures: number;
  },
): Promise<VerificationOutcome> {
  const [row] = await sql<{ outcome: VerificationOutcome }[]>`
    select herald_verify_otp_outcome(
      ${attempt.workspaceId}, ${attempt.userId}, ${attempt.recipient}, ${attempt.requestId},
      ${attempt.purpose}, ${sql.array([...attempt.codeHashes])}::bytea[], ${attempt.windowMinutes},
      ${attempt.maxFailures}) as outcome`;
  return row?.outcome ?? 'failed';
}

/**
 * Delivery receipt for a code: kept for the request the provider id belongs to (or its attempt
 * on that provider, when the receipt overtakes the submission's answer); the latest wins.
 */
export async function recordOtpDelivery(
  sql: Sql | TransactionSql,
  input: {
    requestId: string;
    provider: string;
    providerMessageId: string;
    status: 'delivered' | 'undelivered' | 'unknown';
    errorCode: string | null;
    at: Date;
  },
): Promise<RecordedReceipt> {
  const [row] = await sql<{ delaySeconds: number | null }[]>`
    update otp_requests set delivery_status = ${input.status},
      delivery_error_code = ${input.errorCode}, delivered_at = ${input.at}
    where id = ${input.requestId} and provider_slug = ${input.provider}
      and (provider_message_id = ${input.providerMessageId}
           or (provider_message_id is null and attempt_started_at is not null))
      and (delivered_at is null or delivered_at <= ${input.at})
    returning extract(epoch from ${input.at}::timestamptz - attempt_started_at)::float8 as delay_seconds`;
  return { kept: row !== undefined, delaySeconds: row?.delaySeconds ?? null };
}

/**
 * Fails (and refunds) up to `limit` requests whose code expired before any submission was
 * attempted: saved while Temporal was unreachable, and never retried with their key.
 */
export async function failUnsentExpiredOtpRequests(sql: Sql, limit: number): Promise<number> {
  const unsent = await sql<{ id: string }[]>`
    select id from otp_requests
    where status = 'pending' and attempt_started_at is null and expires_at < now()
    limit ${limit}`;
  for (const { id } of unsent) await markOtpFailed(sql, id, 'expired before it was submitted');
  return unsent.length;
}

/**
 * Settles up to `limit` requests whose code was submitted but that no run finished: a first try
 * beside the start (activities/first-try.ts) submits while Temporal may be away, and then no run
 * is started unless the request is retried with its key. A quarter of an hour past its expiry
 * (any run has finished its request by then), a request still pending is failed and refunded, as
 * its run's reconciliation would at expiry, and each is given its outcome. Only requests expired
 * within a week: older ones predate the sweep (an ended run that left no outcome), and finishing
 * them now would send their webhooks' `otp.expired` days late.
 */
export async function finishRunlessOtpRequests(sql: Sql, limit: number): Promise<number> {
  const runless = await sql<{ id: string; status: string }[]>`
    select id, status from otp_requests
    where outcome is null and attempt_started_at is not null
      and expires_at between now() - interval '7 days' and now() - interval '15 minutes'
    limit ${limit}`;
  for (const { id, status } of runless) {
    if (status === 'pending')
      await markOtpFailed(sql, id, 'its submission was never confirmed, and no run reconciled it');
    await finishOtpRequest(sql, id);
  }
  return runless.length;
}

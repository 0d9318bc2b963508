import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { activityInfo, Context, heartbeat } from '@temporalio/activity';
import { beginScheduledCampaign } from '../db/campaign-lifecycle.js';
import {
  type CampaignForSubmission,
  completeCampaign,
  countMessages,
  findCampaignForSubmission,
  findPendingMessages,
  markAttempts,
  type PendingMessage,
  type SettledMessage,
  settleMessages,
} from '../db/campaign-messages.js';
import type { Sql, TransactionSql } from '../db/client.js';
import { coalescedWrites } from '../db/coalesced-writes.js';
import { ensureOptOutLinks, optOut } from '../db/opt-outs.js';
import { findCampaignProviders, type ProviderRecord } from '../db/providers.js';
import { earliestHold, findQuietHours, holdMessages } from '../db/quiet-hours.js';
import {
  claimBeside,
  claimWithWriteMark,
  type OpenWriteMark,
  openWriteMark,
  recordWritten,
} from '../db/submission-writes.js';
import type { CampaignStatus } from '../domain/campaign-status.js';
import { activityFailure } from '../domain/errors.js';
import { campaignMessageReference } from '../domain/message-reference.js';
import { OPT_OUT_PLACEHOLDER, renderOptOutLink } from '../domain/opt-out.js';
import { serves } from '../domain/phone.js';
import { OWN_PROVIDER_SLUG } from '../domain/provider-definition.js';
import { heldUntil } from '../domain/quiet-hours.js';
import { resolveProviders } from '../providers/registry.js';
import type { SmppSessions } from '../providers/smpp/sessions.js';
import type { LookupOutcome, SmsProvider, WriteNow } from '../providers/types.js';
import { newOptOutToken } from '../security/tokens.js';
import { campaignChunks, unwrittenClaims } from '../telemetry/metrics.js';
import {
  LeaseLost,
  MAX_SUBMISSION_MS,
  RECORDING_GRACE_MS,
  SUBMISSION_LEASE_MS,
  SubmissionLease,
} from './lease.js';
import { OtpFirst } from './otp-first.js';
import { submitWithRetries, type WriteMark } from './submission.js';
import { createPacer, type Pacer } from './throughput.js';

export interface CampaignActivityDeps {
  sql: Sql;
  ownProviderUrl: string;
  publicUrl: string;
  /** Decrypts provider credentials. */
  secret: string;
  /** The `own` provider's throughput; unset: no limit. */
  ownProviderMessagesPerSecond?: number | null;
  /** The worker's SMPP binds: SMPP submissions go through them. */
  smppSessions?: SmppSessions;
  /** The worker's OTP-first gate: batches hold back while a code is being submitted. */
  otpFirst?: OtpFirst;
}

export interface ChunkInput {
  campaignId: number;
  fromSeq: number;
  toSeq: number;
  quietHours?: boolean;
}

/** What a chunk's attempt starts from: its campaign, the campaign's providers, its messages. */
export interface ChunkStart {
  campaign: CampaignForSubmission | undefined;
  records: ProviderRecord[];
  /** Unsettled, from the attempt's first seq on: read under the chunk's lease. */
  pending: PendingMessage[];
}

/** A chunk's start in one round trip, for an attempt that holds its lease already. */
export async function readChunk(
  sql: Sql | TransactionSql,
  input: ChunkInput,
  fromSeq = input.fromSeq,
): Promise<ChunkStart> {
  const [campaign, records, pending] = await Promise.all([
    findCampaignForSubmission(sql, input.campaignId),
    findCampaignProviders(sql, input.campaignId),
    findPendingMessages(sql, input.campaignId, fromSeq, input.toSeq),
  ]);
  return { campaign, records, pending };
}

/** One attempt at a chunk: what it is, where it resumes, how it beats and how it takes its lease. */
export interface ChunkAttempt {
  run: 'local' | 'activity' | 'first_try';
  /** The first seq not yet done by an earlier attempt (its heartbeat); unset: the chunk's first. */
  resumeFrom?: number;
  beat: (resumeFrom: number) => void;
  /**
   * The chunk's lease: one held already (a first try's, taken as its campaign was saved), or how
   * to take it; undefined when this attempt gives way to whoever holds it.
   */
  lease: SubmissionLease | ((sql: Sql, key: string) => Promise<SubmissionLease | undefined>);
  /** With a lease held already: the chunk's start, read when it was taken (readChunk). */
  start?: ChunkStart;
  /** A pacer with slots reserved ahead for this attempt; unset: a new one. */
  pacer?: Pacer;
}

/** Messages submitted concurrently within a chunk; each batch is one attempt write and one settle. */
const BATCH_SIZE = 50;
/** Most claims one coalesced UPDATE carries (claimOne): more than a chunk ever has in flight. */
const CLAIMS_PER_WRITE = 500;
/**
 * A mark opened ahead is taken by a claim made within this; older, it is rolled back and the claim
 * opens its own, far from Postgres's idle-in-transaction timeout (5 s, db/client.ts).
 */
const MARK_AHEAD_FRESH_MS = 1_000;
/** How often a write mark whose COMMIT failed is recorded again. */
const RECORD_AGAIN_MS = 500;
/** How often an uncertain submission not found yet is looked up again. */
const LOOKUP_AGAIN_MS = 3_000;
/** Well inside the workflow's 10 s heartbeat timeout. */
const HEARTBEAT_INTERVAL_MS = 2_000;

/** One lease per chunk: the unit one activity attempt works. */
export const chunkLeaseKey = (campaignId: number, fromSeq: number) =>
  `campaign/${campaignId}/${fromSeq}`;

/** The providers a campaign's messages go through, in order, from their records. */
export function providerChain(
  deps: CampaignActivityDeps,
  campaign: CampaignForSubmission,
  records: ProviderRecord[],
) {
  const slugs =
    campaign.routingType === 'failover'
      ? (campaign.routeProviders ?? [])
      : [campaign.providerSlug ?? OWN_PROVIDER_SLUG];
  return resolveProviders(records, deps, campaign.workspaceId, slugs);
}

/**
 * Each recipient's text: its own when the campaign is personalised (stored when it was saved),
 * else the campaign's body; then a marketing message's `{opt_out_url}` becomes that recipient's
 * link, made once per workspace and recipient and reused by later messages.
 */
async function bodiesFor(
  deps: CampaignActivityDeps,
  campaign: CampaignForSubmission,
  messages: PendingMessage[],
): Promise<Map<number, string>> {
  const textOf = (message: PendingMessage) => message.body ?? campaign.body;
  // A personalised text keeps the template's placeholder: its variables cannot hold one.
  if (campaign.purpose !== 'marketing' || !campaign.body.includes(OPT_OUT_PLACEHOLDER))
    return new Map(messages.map((message) => [message.seq, textOf(message)]));
  const tokens = await ensureOptOutLinks(
    deps.sql,
    campaign.workspaceId,
    messages
      .filter((message) => !message.erased)
      .map((message) => ({ recipient: message.recipient, token: newOptOutToken() })),
  );
  return new Map(
    messages.map((message) => [
      message.seq,
      renderOptOutLink(textOf(message), deps.publicUrl, tokens.get(message.recipient)),
    ]),
  );
}

/**
 * Asks the provider whether it has a submission. One that cannot answer now (down, overloaded)
 * leaves the message queued and marked, for a later attempt to ask again, until the message's
 * validity ends; then "not found", which never resends (the validity check comes first).
 */
async function lookUp(
  provider: SmsProvider,
  reference: string,
  validUntil: Date | null,
): Promise<LookupOutcome> {
  try {
    return (await provider.lookup?.(reference)) ?? { found: false };
  } catch (error) {
    if (!validUntil || Date.now() >= validUntil.getTime()) return { found: false };
    throw activityFailure(
      'LookupUnanswered',
      `${provider.slug} could not look ${reference} up: ${(error as Error).message}`,
    );
  }
}

/**
 * Looks an uncertain submission up until it is found or the provider has had RECORDING_GRACE_MS
 * since `startedAt` (performance.now()) to record it.
 */
async function lookUpOnceRecorded(
  provider: SmsProvider,
  reference: string,
  validUntil: Date | null,
  startedAt: number,
): Promise<LookupOutcome> {
  for (;;) {
    const found = await lookUp(provider, reference, validUntil);
    const waited = performance.now() - startedAt;
    if (found.found || waited >= RECORDING_GRACE_MS) return found;
    await sleep(Math.min(LOOKUP_AGAIN_MS, RECORDING_GRACE_MS - waited));
  }
}

/** A settled read's value, or its failure thrown. */
function fulfilled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

/** The message's campaign was canceled before it was claimed: it is not submitted. */
class ClaimWithdrawn extends Error {}

/**
 * Claims messages for an attempt on `provider`, only while `lease` holds (else it is lost);
 * returns the ones claimed: those left out belong to a canceled campaign.
 */
async function claim(
  lease: SubmissionLease,
  campaignId: number,
  seqs: number[],
  provider: string,
): Promise<Set<number>> {
  const { leaseHeld, claimed } = await markAttempts(lease.sql, {
    campaignId,
    seqs,
    provider,
    lease: { key: lease.key, token: lease.token, marginMs: MAX_SUBMISSION_MS },
  });
  if (!leaseHeld) throw new LeaseLost('it ended before the submissions were marked');
  return new Set(claimed);
}

/**
 * A marketing campaign's messages that go now, of those pending, when its workspace keeps quiet
 * hours: the rest are marked with the time their recipient's window opens, and wait. A message
 * an earlier attempt claimed, or one to be failed (opted out, erased), or past its validity
 * (it fails as expired) is never held; nor is any message of a transactional campaign.
 */
async function outsideQuietHours(
  deps: CampaignActivityDeps,
  campaign: CampaignForSubmission,
  pending: PendingMessage[],
): Promise<PendingMessage[]> {
  if (campaign.purpose !== 'marketing') return pending;
  const window = await findQuietHours(deps.sql, campaign.workspaceId);
  if (!window) return pending;
  const now = new Date();
  const validUntil = campaign.validUntil?.getTime() ?? Number.POSITIVE_INFINITY;
  const holds = pending.map((message) => {
    const holdable =
      !message.attemptProvider &&
      !message.optedOut &&
      !message.erased &&
      now.getTime() < validUntil;
    const opening = holdable ? heldUntil(window, message.recipient, now) : null;
    // Woken by its validity's end at the latest, to fail as expired then.
    const until = opening && new Date(Math.min(opening.getTime(), validUntil));
    return { message, until };
  });
  await holdMessages(
    deps.sql,
    campaign.id,
    holds.map(({ message, until }) => ({ seq: message.seq, until })),
  );
  return holds.flatMap(({ message, until }) => (until ? [] : [message]));
}

type ClaimAnswer = 'claimed' | 'withdrawn' | 'lease-lost';

/**
 * Per lease, one writer per campaign and provider: the claims made meanwhile go in one UPDATE.
 * For a provider that cannot look messages up, the batch also gets its write mark, opened right
 * after the UPDATE in the same round trip (db/submission-writes.ts), shared by the messages it
 * claimed.
 */
const claimWriters = new WeakMap<
  SubmissionLease,
  Map<string, (seq: number) => Promise<{ answer: ClaimAnswer; mark?: WriteMark }>>
>();

function claimWriter(
  lease: SubmissionLease,
  campaignId: number,
  provider: string,
  withWriteMark: boolean,
) {
  const writers = claimWriters.get(lease) ?? new Map();
  claimWriters.set(lease, writers);
  const key = `${campaignId}/${provider}`;
  let writer = writers.get(key);
  if (!writer) {
    writer = coalescedWrites(
      async (seqs: number[]) => {
        const claim = (sql: Sql, batch?: string) =>
          markAttempts(sql, {
            campaignId,
            seqs,
            provider,
            lease: { key: lease.key, token: lease.token, marginMs: MAX_SUBMISSION_MS },
            batch,
          });
        let answer: Awaited<ReturnType<typeof claim>>;
        let mark: SharedWriteMark | undefined;
        const ahead = withWriteMark ? takeMarkAhead(lease) : undefined;
        if (withWriteMark) {
          const batch = ahead?.batch ?? randomUUID();
          const { claimed, mark: opened } = ahead
            ? await claimBeside(claim(lease.sql, batch), ahead.mark)
            : await claimWithWriteMark(
                lease.sql,
                batch,
                (session) => claim(session, batch),
                () => recordWrittenAgain(lease.sql, batch),
              );
          answer = claimed;
          mark = new SharedWriteMark(opened, claimed.leaseHeld ? claimed.claimed.length : 0);
        } else {
          answer = await claim(lease.sql);
        }
        const { leaseHeld, claimed } = answer;
        const taken = new Set(leaseHeld ? claimed : []);
        return seqs.map((seq) => ({
          answer: (!leaseHeld
            ? 'lease-lost'
            : taken.has(seq)
              ? 'claimed'
              : 'withdrawn') as ClaimAnswer,
          mark: taken.has(seq) ? mark : undefined,
        }));
      },
      { max: CLAIMS_PER_WRITE },
    );
    writers.set(key, writer);
  }
  return writer;
}

/**
 * Marks opened ahead of a lease's first claim: a first try's, opened while its campaign's save
 * commits (activities/first-try.ts), so that its claim is one round trip alone. Taken by the
 * first claim; rolled back if no claim takes it before the attempt ends.
 */
const marksAhead = new WeakMap<
  SubmissionLease,
  { batch: string; mark: Promise<OpenWriteMark>; openedAt: number }
>();

/** Opens the mark of `lease`'s first claim now (for a provider that cannot look messages up). */
export function openMarkAhead(lease: SubmissionLease) {
  const batch = randomUUID();
  const mark = openWriteMark(lease.sql, batch, () => recordWrittenAgain(lease.sql, batch));
  // Its failure is the claim's to report.
  mark.catch(() => {});
  marksAhead.set(lease, { batch, mark, openedAt: performance.now() });
}

/**
 * The mark opened ahead of `lease`'s first claim, if it is fresh; one left waiting (a bind being
 * made) nears Postgres's idle-in-transaction timeout, and is rolled back.
 */
function takeMarkAhead(lease: SubmissionLease) {
  const ahead = marksAhead.get(lease);
  if (ahead && performance.now() - ahead.openedAt < MARK_AHEAD_FRESH_MS) {
    marksAhead.delete(lease);
    return ahead;
  }
  dropMarkAhead(lease);
  return undefined;
}

/** Rolls back a mark opened ahead that no claim took. */
export function dropMarkAhead(lease: SubmissionLease) {
  marksAhead.get(lease)?.mark.then(
    (unused) => unused.rollback(),
    () => {},
  );
  marksAhead.delete(lease);
}

/**
 * A batch's write mark, shared by the messages it claimed. Once every one of them came to be
 * written or gave up, the mark commits and the writes of those to be written run right after its
 * COMMIT, together; when all gave up, it is rolled back.
 */
class SharedWriteMark implements WriteMark {
  #undecided: number;
  readonly #writes: WriteNow[] = [];
  readonly #committed: Promise<void>;
  #commit!: (committing: Promise<void>) => void;

  constructor(
    private readonly mark: OpenWriteMark,
    claimed: number,
  ) {
    this.#undecided = claimed;
    this.#committed = new Promise((resolve) => {
      this.#commit = resolve;
    });
    if (claimed === 0) mark.rollback();
  }

  /** `write` must not throw (each SMPP write guards itself): it runs inside the COMMIT's write. */
  commit(write: WriteNow): Promise<void> {
    this.#writes.push(write);
    this.#decided();
    return this.#committed;
  }

  giveUp() {
    this.#decided();
  }

  #decided() {
    this.#undecided--;
    if (this.#undecided > 0) return;
    if (this.#writes.length === 0) this.mark.rollback();
    else {
      const writes = this.#writes;
      this.#commit(this.mark.commit(() => writes[0]?.together(writes)));
    }
  }
}

/**
 * A write mark's COMMIT failed after its PDUs were written (Postgres went away meanwhile): the row
 * is recorded again, for as long as a lease lasts. A restart of Postgres is caught by the epoch.
 */
async function recordWrittenAgain(sql: Sql, batch: string) {
  const until = performance.now() + SUBMISSION_LEASE_MS;
  while (performance.now() < until) {
    try {
      return await recordWritten(sql, batch);
    } catch {
      await sleep(RECORD_AGAIN_MS);
    }
  }
}

/**
 * Per lease, one writer of its campaign's acceptances by providers that cannot look messages up:
 * recorded as they come (together when they come together), not with the batch, since a crash
 * would leave them claimed and unsettled, to be failed as unknown although they were accepted.
 */
const acceptanceWriters = new WeakMap<
  SubmissionLease,
  (settled: SettledMessage) => Promise<void>
>();

function recordAccepted(lease: SubmissionLease, campaignId: number, settled: SettledMessage) {
  let writer = acceptanceWriters.get(lease);
  if (!writer) {
    writer = coalescedWrites(
      async (items: SettledMessage[]) => {
        await settleMessages(lease.sql, campaignId, items);
        return items.map(() => undefined);
      },
      { max: CLAIMS_PER_WRITE },
    );
    acceptanceWriters.set(lease, writer);
  }
  // Not recorded now (Postgres away): the batch's settlement records it.
  return writer(settled).catch(() => {});
}

/**
 * Claims one message as it is about to be written, or throws ClaimWithdrawn when its campaign was
 * canceled (LeaseLost when the lease ended). Claims made while one is being written go together.
 */
async function claimOne(
  lease: SubmissionLease,
  campaignId: number,
  seq: number,
  provider: SmsProvider,
): Promise<WriteMark | undefined> {
  const writer = claimWriter(lease, campaignId, provider.slug, !provider.lookup);
  const { answer, mark } = await writer(seq);
  if (answer === 'lease-lost') throw new LeaseLost('it ended before the submission was marked');
  if (answer === 'withdrawn') throw new ClaimWithdrawn();
  return mark;
}

/**
 * What runs chunks for one worker process: its activities (remote, or local for a small campaign's
 * first try inside its workflow task) and, in a process that also serves the api, the first try
 * made beside a campaign's start (activities/first-try.ts).
 */
export function createChunkRunner(deps: CampaignActivityDeps) {
  const otpFirst = deps.otpFirst ?? new OtpFirst();
  /**
   * Walks the provider chain for one message. A rejection or persistent failure moves on to the
   * next provider; an unknown outcome never does (that could send twice): it is looked up, and
   * counted as failed if the provider cannot confirm it.
   */
  async function deliverOne(
    campaign: CampaignForSubmission,
    chain: SmsProvider[],
    pacer: Pacer,
    lease: SubmissionLease,
    message: PendingMessage,
    body: string,
  ): Promise<SettledMessage> {
    const { seq } = message;
    const reference = campaignMessageReference(campaign.id, seq);
    const sent = (provider: string, providerMessageId: string): SettledMessage => ({
      seq,
      status: 'sent',
      provider,
      providerMessageId,
      error: null,
    });
    const failed = (provider: string | null, error: string): SettledMessage => ({
      seq,
      status: 'failed',
      provider,
      providerMessageId: null,
      error,
    });
    const canceled: SettledMessage = {
      seq,
      status: 'canceled',
      provider: null,
      providerMessageId: null,
      error: null,
    };
    if (message.erased && !message.attemptProvider)
      return failed(null, 'the recipient was erased after the send');
    if (message.optedOut && !message.attemptProvider)
      return failed(null, 'the recipient opted out after the send');
    let start = 0;
    if (message.attemptProvider) {
      // An earlier attempt may have reached this provider: only the provider can say, and one
      // that cannot be asked is never given the message again.
      const index = chain.findIndex((provider) => provider.slug === message.attemptProvider);
      const previous = chain[index];
      if (previous) {
        if (!previous.lookup)
          return failed(
            previous.slug,
            `outcome unknown: an attempt was interrupted, and ${previous.slug} cannot look messages up`,
          );
        const found = await lookUpOnceRecorded(
          previous,
          reference,
          campaign.validUntil,
          performance.now() - (message.attemptAgeMs ?? 0),
        );
        if (found.found) return sent(previous.slug, found.providerMessageId);
        start = index;
      }
    }
    let error = 'no active provider';
    for (const [index, provider] of chain.entries()) {
      // A route's provider that does not serve the recipient's country is passed over.
      if (index < start || !serves(provider.countries, message.recipient)) continue;
      // The attempt is marked before the message leaves Herald: with its batch for a provider that
      // can look messages up, else at the moment it is written (in its SMPP window slot, right
      // before its HTTP request), so an interruption leaves uncertain only what may have left. A
      // message an earlier attempt left uncertain is claimed again, so a cancel since then holds
      // it back.
      const markFirst = index > start || !provider.lookup || message.attemptProvider !== null;
      // Without a lookup a marked, unsettled message would be failed as unknown after a crash:
      // its acceptance is recorded at once, in its SMPP window slot.
      let recorded = false;
      const record = async (providerMessageId: string) => {
        await recordAccepted(lease, campaign.id, sent(provider.slug, providerMessageId));
        recorded = true;
      };
      const submittedAt = performance.now();
      const outcome = await submitWithRetries(
        provider,
        {
          to: message.recipient,
          from: campaign.senderId,
          body,
          reference,
          callbackUrl: new URL(`/webhooks/providers/${provider.slug}`, deps.publicUrl).toString(),
          validUntil: campaign.validUntil,
          afterAccepted: provider.lookup ? undefined : record,
        },
        pacer,
        {
          fence: lease,
          beforeFirstSubmission: markFirst
            ? () => claimOne(lease, campaign.id, seq, provider)
            : undefined,
        },
        'campaign',
      ).catch((error: unknown) => {
        if (error instanceof ClaimWithdrawn) return undefined;
        throw error;
      });
      if (!outcome) return canceled;
      switch (outcome.kind) {
        case 'accepted': {
          if (!provider.lookup && !recorded) await record(outcome.providerMessageId);
          return sent(provider.slug, outcome.providerMessageId);
        }
        case 'rejected':
          if (!outcome.optedOut) break;
          // The recipient told this provider STOP: no other provider may carry the message.
          await optOut(deps.sql, campaign.workspaceId, message.recipient, 'reply');
          return failed(provider.slug, `${provider.slug}: ${outcome.reason}`);
        case 'expired':
          return failed(null, outcome.reason);
        case 'unknown': {
          const found = provider.lookup
            ? await lookUpOnceRecorded(provider, reference, campaign.validUntil, submittedAt)
            : undefined;
          return found?.found
            ? sent(provider.slug, found.providerMessageId)
            : failed(provider.slug, `outcome unknown: ${outcome.reason}`);
        }
      }
      error = `${provider.slug}: ${outcome.reason}`;
    }
    return failed(null, error);
  }

  /**
   * Submits one chunk under its lease (activities/lease.ts); progress is beaten so a retried
   * attempt resumes where it stopped, and a takeover looks interrupted submissions up. The chunk
   * that leaves no message of its campaign queued completes the campaign, and says so. Asked
   * to keep quiet hours (runs that can wait for them), a marketing message outside its
   * recipient's window is left queued: `heldUntil` says when the chunk's first one may go.
   */
  async function runChunk(
    input: ChunkInput,
    attempt: ChunkAttempt,
  ): Promise<{ completed: boolean; heldUntil?: string }> {
    let resumeFrom = attempt.resumeFrom ?? input.fromSeq;
    campaignChunks.inc({ run: attempt.run });
    const beat = attempt.beat;
    // Beat before the first database call, and while a slow batch runs, so a dead worker is
    // noticed within the heartbeat timeout.
    beat(resumeFrom);
    const beating = setInterval(() => beat(resumeFrom), HEARTBEAT_INTERVAL_MS);
    const given = attempt.lease;
    let lease: SubmissionLease | undefined;
    try {
      let start: ChunkStart;
      if (given instanceof SubmissionLease) {
        lease = given;
        start = attempt.start ?? (await readChunk(deps.sql, input, resumeFrom));
      } else {
        // Independent reads go together: each round trip to Postgres is on a message's way out.
        // The chunk's messages are read only once its lease is held.
        const [found, records, leased] = await Promise.allSettled([
          findCampaignForSubmission(deps.sql, input.campaignId),
          findCampaignProviders(deps.sql, input.campaignId),
          given(deps.sql, chunkLeaseKey(input.campaignId, input.fromSeq)),
        ]);
        // Held before the other reads' failures are thrown, so that `finally` releases it.
        lease = fulfilled(leased);
        // Someone else is at this chunk (a first try's lease is never waited for).
        if (!lease) return { completed: false };
        start = {
          campaign: fulfilled(found),
          records: fulfilled(records),
          pending: await findPendingMessages(deps.sql, input.campaignId, resumeFrom, input.toSeq),
        };
      }
      const campaign = start.campaign;
      if (!campaign)
        throw activityFailure('CampaignNotFound', `campaign ${input.campaignId} not found`);
      const chain = providerChain(deps, campaign, start.records);
      const unsent = start.pending;
      unwrittenClaims.inc(unsent.filter((message) => message.attemptUnwritten).length);
      const pacer = attempt.pacer ?? createPacer(deps.sql, campaign.workspaceId);
      const pending = input.quietHours ? await outsideQuietHours(deps, campaign, unsent) : unsent;
      for (let offset = 0; offset < pending.length; offset += BATCH_SIZE) {
        await otpFirst.beforeCampaignBatch();
        let batch = pending.slice(offset, offset + BATCH_SIZE);
        const fresh = batch
          .filter((message) => !message.attemptProvider && !message.optedOut && !message.erased)
          .map((message) => message.seq);
        if (chain[0]?.lookup && fresh.length > 0) {
          const claimed = await claim(lease, campaign.id, fresh, chain[0].slug);
          // The rest were canceled with their campaign: nothing of theirs is left to do.
          batch = batch.filter(
            (message) => !fresh.includes(message.seq) || claimed.has(message.seq),
          );
        }
        const bodies = await bodiesFor(deps, campaign, batch);
        const held = lease;
        // Every submission of the batch ends before the next step: none outlives the attempt.
        const outcomes = await Promise.allSettled(
          batch.map((message) =>
            deliverOne(campaign, chain, pacer, held, message, bodies.get(message.seq) as string),
          ),
        );
        await settleMessages(
          deps.sql,
          campaign.id,
          outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])),
        );
        const failure = outcomes.find((outcome) => outcome.status === 'rejected');
        if (failure) throw failure.reason;
        resumeFrom = (batch.at(-1)?.seq ?? input.fromSeq) + 1;
        beat(resumeFrom);
      }
      const held =
        input.quietHours &&
        campaign.purpose === 'marketing' &&
        (await earliestHold(deps.sql, campaign.id, input.fromSeq, input.toSeq));
      if (held) return { completed: false, heldUntil: held.toISOString() };
      return { completed: await completeCampaign(deps.sql, campaign.id) };
    } catch (error) {
      if (error instanceof LeaseLost) throw activityFailure('SubmissionLeaseLost', error.message);
      throw error;
    } finally {
      clearInterval(beating);
      if (lease) dropMarkAhead(lease);
      // Nothing of this attempt is in flight any more: a successor need not wait the lease out.
      await lease?.close();
    }
  }

  return runChunk;
}

export type ChunkRunner = ReturnType<typeof createChunkRunner>;

export function createCampaignActivities(
  deps: CampaignActivityDeps,
  runChunk: ChunkRunner = createChunkRunner(deps),
) {
  return {
    /** A scheduled campaign's time has come: queued now, unless it was canceled meanwhile. */
    async beginScheduledCampaign(input: { campaignId: number }): Promise<CampaignStatus> {
      const status = await beginScheduledCampaign(deps.sql, input.campaignId);
      if (!status)
        throw activityFailure('CampaignNotFound', `campaign ${input.campaignId} not found`);
      return status;
    },

    async planCampaign(input: { campaignId: number }): Promise<{ total: number }> {
      return { total: await countMessages(deps.sql, input.campaignId) };
    },

    /** runChunk as a Temporal activity: remote (beating its heartbeat) or local (a first try). */
    async submitChunk(input: ChunkInput): Promise<{ completed: boolean; heldUntil?: string }> {
      // A local activity (a small campaign's first try) cannot beat: its workflow task's timeout
      // notices a lost worker instead.
      const local = activityInfo().isLocal;
      const signal = Context.current().cancellationSignal;
      return runChunk(input, {
        run: local ? 'local' : 'activity',
        resumeFrom: activityInfo().heartbeatDetails as number | undefined,
        beat: local ? () => {} : heartbeat,
        lease: (sql, key) => SubmissionLease.acquire(sql, key, signal),
      });
    },

    async completeCampaign(input: { campaignId: number }): Promise<void> {
      if (!(await completeCampaign(deps.sql, input.campaignId))) {
        throw activityFailure('CampaignIncomplete', 'messages are still queued');
      }
    },
  };
}

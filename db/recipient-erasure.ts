/**
 * Erases one number everywhere Herald holds it (`herald recipient erase`, README "Retention and
 * erasure"), in one transaction: campaign messages and OTP requests keep only the masked form
 * (herald_masked_number, 0029), failed verifications and opt-out links go, an opt-out (a STOP
 * reply, a link, an operator's) is kept as the number's keyed hash so it still holds, and the
 * texts that may quote the number (webhook payloads, stored responses, audit entries, errors,
 * bodies, replies) have it masked; the replies it sent keep only the masked sender, no text. A personalised message's own text (0035) is emptied for the number's
 * messages, as retention empties it, and masked where another message's text quotes it. No counter or report table reads a recipient, so every figure stays.
 */
import type { Sql, TransactionSql } from './client.js';

export interface ErasedRows {
  campaignMessages: number;
  otpRequests: number;
  verificationFailures: number;
  optOuts: number;
  optOutLinks: number;
  webhookEvents: number;
  /** Replies the number sent (inbound_messages): sender masked, text emptied. */
  inboundMessages: number;
  idempotencyRecords: number;
  auditEntries: number;
  /** Campaign bodies, personalised message texts and OTP texts that quoted the number. */
  texts: number;
}

export interface Erasure {
  number: string;
  /** One workspace, or null for every workspace. */
  workspaceId: number | null;
  /** The number's keyed-hash form (security/recipient-hash.ts), what its opt-outs become. */
  erasedForm: string;
}

/** The SMS and OTP send endpoints' idempotency records: their resource is a campaign, an OTP request. */
const SMS_ENDPOINT = 'POST /api/v1/messages';
const OTP_ENDPOINT = 'POST /api/v1/otp/send';

export async function eraseRecipient(sql: Sql, erasure: Erasure): Promise<ErasedRows> {
  return sql.begin((tx) => eraseRecipientIn(tx, erasure));
}

/** As eraseRecipient, within `tx`: the transaction that also records the erasure. */
export async function eraseRecipientIn(
  tx: TransactionSql,
  { number, workspaceId, erasedForm }: Erasure,
): Promise<ErasedRows> {
  const digits = number.replace(/^\+/, '');
  const quoting = `%${digits}%`;
  const of = (column: 'workspace_id' | 'c.workspace_id') =>
    workspaceId === null
      ? tx``
      : column === 'workspace_id'
        ? tx`and workspace_id = ${workspaceId}`
        : tx`and c.workspace_id = ${workspaceId}`;

  // First the records whose stored request named the number: found through the rows it made,
  // before those are masked. Their request hash (a plain SHA-256 of a body holding the number)
  // is replaced, so a retry with the key is refused as another request, never sent again.
  const idempotencyRecords = await tx`
    update idempotency_keys k
    set request_hash = sha256(convert_to('erased recipient', 'UTF8')),
        response_body = herald_scrub_number(k.response_body, ${number})
    where (k.endpoint = ${SMS_ENDPOINT} and k.resource_id in (
            select m.campaign_id::text from campaign_messages m
            join campaigns c on c.id = m.campaign_id
            where m.recipient = ${number} ${of('c.workspace_id')}))
       or (k.endpoint = ${OTP_ENDPOINT} and k.resource_id in (
            select id::text from otp_requests where recipient = ${number} ${of('workspace_id')}))
       or (k.response_body like ${quoting} ${of('workspace_id')})`;

  const campaignMessages = await tx`
    update campaign_messages m
    set recipient = herald_masked_number(m.recipient),
        error = herald_scrub_number(m.error, m.recipient),
        body = case when m.body is null then null else '' end
    from campaigns c
    where c.id = m.campaign_id and m.recipient = ${number} ${of('c.workspace_id')}`;
  // The numbers a marketing send left out (0034): counted with the campaigns' messages.
  const campaignExclusions = await tx`
    update campaign_exclusions e set recipient = herald_masked_number(e.recipient)
    from campaigns c
    where c.id = e.campaign_id and e.recipient = ${number} ${of('c.workspace_id')}`;

  const otpRequests = await tx`
    update otp_requests
    set recipient = herald_masked_number(recipient), error = herald_scrub_number(error, recipient)
    where recipient = ${number} ${of('workspace_id')}`;

  const verificationFailures = await tx`
    delete from otp_verification_failures where recipient = ${number} ${of('workspace_id')}`;

  // An opt-out is kept, as the hash: a later send to the number is still refused.
  const [optOuts] = await tx<{ count: number }[]>`
    with plain as (
      delete from opt_outs where recipient = ${number} ${of('workspace_id')}
      returning workspace_id, source, created_at
    ),
    hashed as (
      insert into opt_outs (workspace_id, recipient, source, created_at)
      select workspace_id, ${erasedForm}, source, created_at from plain
      on conflict (workspace_id, recipient) do nothing
    )
    select count(*)::int as count from plain`;

  const optOutLinks = await tx`
    delete from opt_out_links where recipient = ${number} ${of('workspace_id')}`;

  // What the number sent back: kept (it counts in the reports), masked and without its text; a
  // reply that quotes the number has it masked.
  const inboundMessages = await tx`
    update inbound_messages set from_number = herald_masked_number(from_number), text = '',
      personal_data_dropped_at = coalesce(personal_data_dropped_at, now())
    where from_number = ${number} ${of('workspace_id')}`;
  const inboundTexts = await tx`
    update inbound_messages set text = herald_scrub_number(text, ${number})
    where text like ${quoting} ${of('workspace_id')}`;

  // Undelivered events carry the number to their endpoints: from now on they carry the mask.
  const webhookEvents = await tx`
    update webhook_events set data = herald_scrub_number(data::text, ${number})::jsonb
    where data::text like ${quoting} ${of('workspace_id')}`;

  const auditEntries = await tx`
    update audit_log
    set target = herald_scrub_number(target, ${number}),
        details = herald_scrub_number(details::text, ${number})::jsonb
    where (target like ${quoting} or details::text like ${quoting}) ${of('workspace_id')}`;

  const campaignTexts = await tx`
    update campaigns set body = herald_scrub_number(body, ${number})
    where body like ${quoting} ${of('workspace_id')}`;
  const messageTexts = await tx`
    update campaign_messages m set body = herald_scrub_number(m.body, ${number})
    from campaigns c
    where c.id = m.campaign_id and m.body like ${quoting} ${of('c.workspace_id')}`;
  const otpTexts = await tx`
    update otp_requests set body_template = herald_scrub_number(body_template, ${number})
    where body_template like ${quoting} ${of('workspace_id')}`;

  return {
    campaignMessages: campaignMessages.count + campaignExclusions.count,
    otpRequests: otpRequests.count,
    verificationFailures: verificationFailures.count,
    optOuts: optOuts?.count ?? 0,
    optOutLinks: optOutLinks.count,
    webhookEvents: webhookEvents.count,
    inboundMessages: inboundMessages.count,
    idempotencyRecords: idempotencyRecords.count,
    auditEntries: auditEntries.count,
    texts: campaignTexts.count + messageTexts.count + otpTexts.count + inboundTexts.count,
  };
}

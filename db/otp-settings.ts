import { type RowLock, rowLock, type Sql, type TransactionSql } from './client.js';

/** What an OTP send may take from a saved service, a template and the approved senders. */

export interface OtpServiceRecord {
  slug: string;
  name: string;
  purpose: string;
  codeLength: number;
  expiresInMinutes: number;
  templateSlug: string | null;
  messageTemplate: string | null;
  senderId: string | null;
  providerSlug: string | null;
}

export type OtpServiceSettings = Omit<OtpServiceRecord, 'slug'>;

const SERVICE_COLUMNS = (sql: Sql | TransactionSql) => sql`
  slug::text, name, purpose, code_length, expires_in_minutes, template_slug, message_template,
  sender_id, provider_slug`;

export async function findOtpService(sql: Sql, workspaceId: number, slug: string) {
  const [service] = await sql<OtpServiceRecord[]>`
    select ${SERVICE_COLUMNS(sql)} from otp_services
    where workspace_id = ${workspaceId} and slug = ${slug}::uuid`;
  return service;
}

/** The service, locked until the transaction ends, for an update of it. */
export async function lockOtpService(tx: TransactionSql, workspaceId: number, slug: string) {
  const [service] = await tx<OtpServiceRecord[]>`
    select ${SERVICE_COLUMNS(tx)} from otp_services
    where workspace_id = ${workspaceId} and slug = ${slug}::uuid
    for update`;
  return service;
}

export async function insertOtpService(
  sql: Sql | TransactionSql,
  workspaceId: number,
  settings: OtpServiceSettings,
): Promise<OtpServiceRecord> {
  const [service] = await sql<OtpServiceRecord[]>`
    insert into otp_services (workspace_id, name, purpose, code_length, expires_in_minutes,
      template_slug, message_template, sender_id, provider_slug)
    values (${workspaceId}, ${settings.name}, ${settings.purpose}, ${settings.codeLength},
      ${settings.expiresInMinutes}, ${settings.templateSlug}, ${settings.messageTemplate},
      ${settings.senderId}, ${settings.providerSlug})
    returning ${SERVICE_COLUMNS(sql)}`;
  return service as OtpServiceRecord;
}

export async function updateOtpService(
  sql: Sql | TransactionSql,
  workspaceId: number,
  slug: string,
  settings: OtpServiceSettings,
): Promise<OtpServiceRecord | undefined> {
  const [service] = await sql<OtpServiceRecord[]>`
    update otp_services set name = ${settings.name}, purpose = ${settings.purpose},
      code_length = ${settings.codeLength}, expires_in_minutes = ${settings.expiresInMinutes},
      template_slug = ${settings.templateSlug}, message_template = ${settings.messageTemplate},
      sender_id = ${settings.senderId}, provider_slug = ${settings.providerSlug}, updated_at = now()
    where workspace_id = ${workspaceId} and slug = ${slug}::uuid
    returning ${SERVICE_COLUMNS(sql)}`;
  return service;
}

export async function deleteOtpService(
  sql: Sql | TransactionSql,
  workspaceId: number,
  slug: string,
) {
  const result = await sql`
    delete from otp_services where workspace_id = ${workspaceId} and slug = ${slug}::uuid`;
  return result.count > 0;
}

export interface MessageTemplateRecord {
  slug: string;
  body: string;
  purpose: 'transactional' | 'marketing';
  enabled: boolean;
}

/**
 * A template of the workspace. Read `share` by an OTP service being saved with it: its edit or
 * delete (which locks it `update`) waits, then sees what that transaction saved with it.
 */
export async function findMessageTemplate(
  sql: Sql | TransactionSql,
  workspaceId: number,
  slug: string,
  lock?: RowLock,
) {
  const [template] = await sql<MessageTemplateRecord[]>`
    select slug, body, purpose, enabled from message_templates
    where workspace_id = ${workspaceId} and slug = ${slug}
    ${rowLock(sql, lock)}`;
  return template;
}

export async function insertMessageTemplate(
  sql: Sql | TransactionSql,
  input: MessageTemplateRecord & { workspaceId: number; name: string },
): Promise<{ id: number }> {
  const [row] = await sql<{ id: number }[]>`
    insert into message_templates (workspace_id, slug, name, body, purpose, enabled)
    values (${input.workspaceId}, ${input.slug}, ${input.name}, ${input.body}, ${input.purpose},
      ${input.enabled})
    returning id`;
  return row as { id: number };
}

/** Whether the sender is approved; `lock` as for findMessageTemplate. */
export async function isApprovedSender(
  sql: Sql | TransactionSql,
  workspaceId: number,
  providerSlug: string,
  sender: string,
  lock?: RowLock,
): Promise<boolean> {
  const [row] = await sql<{ approved: boolean }[]>`
    select approved from sender_ids
    where workspace_id = ${workspaceId} and provider_slug = ${providerSlug} and sender = ${sender}
    ${rowLock(sql, lock)}`;
  return row?.approved ?? false;
}

export async function upsertSenderId(
  sql: Sql | TransactionSql,
  input: { workspaceId: number; providerSlug: string; sender: string; approved: boolean },
): Promise<{ id: number }> {
  const [row] = await sql<{ id: number }[]>`
    insert into sender_ids (workspace_id, provider_slug, sender, approved)
    values (${input.workspaceId}, ${input.providerSlug}, ${input.sender}, ${input.approved})
    on conflict (workspace_id, provider_slug, sender) do update set approved = excluded.approved
    returning id`;
  return row as { id: number };
}

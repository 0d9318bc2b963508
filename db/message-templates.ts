import { type RowLock, rowLock, type Sql, type TransactionSql } from './client.js';
import type { MessageTemplateRecord } from './otp-settings.js';

/** A workspace's message templates as the console lists and edits them. */

export interface TemplateListing extends MessageTemplateRecord {
  id: number;
  name: string;
  createdAt: Date;
}

/** An OTP service that names a template or a sender: what an edit or a delete must not break. */
export interface DependentOtpService {
  slug: string;
  name: string;
  codeLength: number;
}

const TEMPLATE_COLUMNS = (sql: Sql | TransactionSql) =>
  sql`id, slug, name, body, purpose, enabled, created_at`;

export async function listMessageTemplates(
  sql: Sql,
  workspaceId: number,
): Promise<TemplateListing[]> {
  return sql<TemplateListing[]>`
    select ${TEMPLATE_COLUMNS(sql)} from message_templates
    where workspace_id = ${workspaceId} order by slug`;
}

/**
 * The template as the console shows it. Locked `update` by its edit or delete: an OTP service
 * being saved with it (which reads it `share`) commits first, or waits and then sees the change.
 */
export async function findTemplateListing(
  sql: Sql | TransactionSql,
  workspaceId: number,
  slug: string,
  lock?: RowLock,
): Promise<TemplateListing | undefined> {
  const [template] = await sql<TemplateListing[]>`
    select ${TEMPLATE_COLUMNS(sql)} from message_templates
    where workspace_id = ${workspaceId} and slug = ${slug}
    ${rowLock(sql, lock)}`;
  return template;
}

export async function updateMessageTemplate(
  sql: Sql | TransactionSql,
  workspaceId: number,
  slug: string,
  settings: Pick<TemplateListing, 'name' | 'body' | 'purpose' | 'enabled'>,
): Promise<TemplateListing | undefined> {
  const [template] = await sql<TemplateListing[]>`
    update message_templates set name = ${settings.name}, body = ${settings.body},
      purpose = ${settings.purpose}, enabled = ${settings.enabled}
    where workspace_id = ${workspaceId} and slug = ${slug}
    returning ${TEMPLATE_COLUMNS(sql)}`;
  return template;
}

export async function otpServicesUsingTemplate(
  sql: Sql | TransactionSql,
  workspaceId: number,
  slug: string,
): Promise<DependentOtpService[]> {
  return sql<DependentOtpService[]>`
    select slug::text, name, code_length from otp_services
    where workspace_id = ${workspaceId} and template_slug = ${slug} order by id`;
}

/**
 * Deletes the template. The caller holds its lock (findTemplateListing with `update`) and has found no OTP
 * service naming it: no foreign key guards otp_services.template_slug.
 */
export async function deleteMessageTemplate(
  tx: TransactionSql,
  workspaceId: number,
  slug: string,
): Promise<boolean> {
  const result = await tx`
    delete from message_templates where workspace_id = ${workspaceId} and slug = ${slug}`;
  return result.count > 0;
}

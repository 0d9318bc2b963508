import type { Sql, TransactionSql } from './client.js';
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

export async function findTemplateListing(
  sql: Sql,
  workspaceId: number,
  slug: string,
): Promise<TemplateListing | undefined> {
  const [template] = await sql<TemplateListing[]>`
    select ${TEMPLATE_COLUMNS(sql)} from message_templates
    where workspace_id = ${workspaceId} and slug = ${slug}`;
  return template;
}

/**
 * The template, locked until the transaction ends: an OTP service being saved with it (which
 * reads it `for share`) commits first, or waits and then sees this transaction's change.
 */
export async function lockTemplateListing(
  tx: TransactionSql,
  workspaceId: number,
  slug: string,
): Promise<TemplateListing | undefined> {
  const [template] = await tx<TemplateListing[]>`
    select ${TEMPLATE_COLUMNS(tx)} from message_templates
    where workspace_id = ${workspaceId} and slug = ${slug}
    for update`;
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
 * Deletes the template. The caller holds its lock (lockTemplateListing) and has found no OTP
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

import type { Sql } from './client.js';
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

const TEMPLATE_COLUMNS = (sql: Sql) => sql`id, slug, name, body, purpose, enabled, created_at`;

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

export async function updateMessageTemplate(
  sql: Sql,
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
  sql: Sql,
  workspaceId: number,
  slug: string,
): Promise<DependentOtpService[]> {
  return sql<DependentOtpService[]>`
    select slug::text, name, code_length from otp_services
    where workspace_id = ${workspaceId} and template_slug = ${slug} order by id`;
}

/** Deletes the template unless an OTP service names it (checked in the same statement). */
export async function deleteUnusedMessageTemplate(
  sql: Sql,
  workspaceId: number,
  slug: string,
): Promise<boolean> {
  const result = await sql`
    delete from message_templates t
    where t.workspace_id = ${workspaceId} and t.slug = ${slug}
      and not exists (
        select 1 from otp_services s
        where s.workspace_id = t.workspace_id and s.template_slug = t.slug)`;
  return result.count > 0;
}

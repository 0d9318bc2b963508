import type { Sql } from './client.js';
import type { OtpServiceRecord } from './otp-settings.js';

/** The workspace's saved OTP services, newest first (the console's More services → OTP). */
export async function listOtpServices(sql: Sql, workspaceId: number): Promise<OtpServiceRecord[]> {
  return sql<OtpServiceRecord[]>`
    select slug::text, name, purpose, code_length, expires_in_minutes, template_slug,
           message_template, sender_id, provider_slug
    from otp_services where workspace_id = ${workspaceId}
    order by id desc`;
}

/** Every admin command, in the order usage lists them (cli/main.ts dispatches them). */
import { CAMPAIGN_RECIPIENT_COMMANDS } from './campaign-recipients.js';
import { CAMPAIGN_COMMANDS } from './campaigns.js';
import { CREDIT_COMMANDS } from './credits.js';
import { GUARD_COMMANDS } from './guard.js';
import { INVITE_COMMANDS } from './invites.js';
import { KEY_COMMANDS } from './keys.js';
import { MCP_COMMANDS } from './mcp-admin.js';
import { MEMBER_COMMANDS } from './members.js';
import { OPT_OUT_COMMANDS } from './opt-outs.js';
import { OTP_SERVICE_COMMANDS } from './otp-services.js';
import { PASSWORD_COMMANDS } from './passwords.js';
import { PROVIDER_COMMANDS } from './providers.js';
import { RECIPIENT_COMMANDS } from './recipients.js';
import { RESTORE_COMMANDS } from './restore.js';
import { SECRET_COMMANDS } from './secrets.js';
import { SENDER_COMMANDS } from './senders.js';
import type { AdminCommand } from './table.js';
import { TEMPLATE_COMMANDS } from './templates.js';
import { USER_COMMANDS } from './users.js';
import { WEBHOOK_COMMANDS } from './webhooks.js';
import { WORKSPACE_COMMANDS } from './workspaces.js';

export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  ...WORKSPACE_COMMANDS,
  ...USER_COMMANDS,
  ...PASSWORD_COMMANDS,
  ...KEY_COMMANDS,
  ...PROVIDER_COMMANDS,
  ...CREDIT_COMMANDS,
  ...GUARD_COMMANDS,
  ...RECIPIENT_COMMANDS,
  ...OTP_SERVICE_COMMANDS,
  ...TEMPLATE_COMMANDS,
  ...SENDER_COMMANDS,
  ...CAMPAIGN_COMMANDS,
  ...CAMPAIGN_RECIPIENT_COMMANDS,
  ...OPT_OUT_COMMANDS,
  ...MEMBER_COMMANDS,
  ...INVITE_COMMANDS,
  ...MCP_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...RESTORE_COMMANDS,
  ...SECRET_COMMANDS,
];

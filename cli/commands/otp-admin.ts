/** herald credits add, otp-service create|update|delete, template create, sender create. */
import { addCredits } from '../../commands/credits.js';
import {
  createOtpService,
  deleteOtpService,
  type OtpServiceSettingsInput,
  updateOtpService,
} from '../../commands/otp-services.js';
import { registerSender } from '../../commands/senders.js';
import { createTemplate } from '../../commands/templates.js';
import type { OtpServiceRecord } from '../../db/otp-settings.js';
import type { AdminContext } from '../context.js';
import {
  type CommandResult,
  type Options,
  optional,
  optionOf,
  run,
  text,
  wholeNumber,
} from './options.js';

/** herald credits add --workspace <slug> --amount <n> → {"balance"} */
export async function creditsAdd(context: AdminContext, options: Options): Promise<CommandResult> {
  const raw = optional(options, 'amount');
  // The refusal quotes the amount as typed.
  const label = (field: string) =>
    field === 'amount' && raw !== undefined ? `--amount "${raw}"` : optionOf(field);
  const { amount, balance, workspace } = await run(
    addCredits(context, {
      workspace: text(options, 'workspace'),
      amount: wholeNumber(options, 'amount'),
    }),
    label,
  );
  return {
    json: { balance },
    human: `Added ${amount} credits to ${workspace.slug}; the balance is ${balance}`,
  };
}

/** The options that set an OTP service's settings (create and update). */
export const SETTING_OPTIONS = [
  'name',
  'purpose',
  'code-length',
  'expires-in-minutes',
  'template',
  'message-template',
  'sender-id',
  'provider',
] as const;

function serviceSettings(options: Options): OtpServiceSettingsInput {
  return {
    name: text(options, 'name'),
    purpose: text(options, 'purpose'),
    codeLength: wholeNumber(options, 'code-length'),
    expiresInMinutes: wholeNumber(options, 'expires-in-minutes'),
    template: text(options, 'template'),
    messageTemplate: text(options, 'message-template'),
    senderId: text(options, 'sender-id'),
    provider: text(options, 'provider'),
  };
}

function presentService(service: OtpServiceRecord) {
  return {
    slug: service.slug,
    name: service.name,
    purpose: service.purpose,
    code_length: service.codeLength,
    expires_in_minutes: service.expiresInMinutes,
    template_slug: service.templateSlug,
    message_template: service.messageTemplate,
    sender_id: service.senderId,
    provider_slug: service.providerSlug,
  };
}

/** herald otp-service create --workspace <slug> --name <name> --purpose <purpose> [...] */
export async function otpServiceCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { service, workspace } = await run(
    createOtpService(context, {
      workspace: text(options, 'workspace'),
      ...serviceSettings(options),
    }),
  );
  return {
    json: presentService(service),
    human: `Created OTP service ${service.name} in ${workspace.slug}: slug ${service.slug}`,
  };
}

/** herald otp-service update --workspace <slug> --slug <uuid> [...]: unspecified keep their value. */
export async function otpServiceUpdate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { service, workspace } = await run(
    updateOtpService(context, {
      workspace: text(options, 'workspace'),
      slug: text(options, 'slug'),
      ...serviceSettings(options),
    }),
  );
  return {
    json: presentService(service),
    human: `Updated OTP service ${service.name} (${service.slug}) in ${workspace.slug}`,
  };
}

/** herald otp-service delete --workspace <slug> --slug <uuid>; codes already sent still verify. */
export async function otpServiceDelete(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { slug, workspace } = await run(
    deleteOtpService(context, {
      workspace: text(options, 'workspace'),
      slug: text(options, 'slug'),
    }),
  );
  return {
    json: { slug, deleted: true },
    human: `Deleted OTP service ${slug} from ${workspace.slug}`,
  };
}

/** herald template create --workspace <slug> --slug <slug> --body <text> [...] → {"id", "slug"} */
export async function templateCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { id, slug, purpose, workspace } = await run(
    createTemplate(context, {
      workspace: text(options, 'workspace'),
      slug: text(options, 'slug'),
      body: text(options, 'body'),
      name: text(options, 'name'),
      purpose: text(options, 'purpose'),
      enabled: options.disabled !== true,
    }),
  );
  return {
    json: { id, slug },
    human: `Created ${purpose} template ${slug} (id ${id}) in ${workspace.slug}`,
  };
}

/** herald sender create --workspace <slug> --provider <slug> --sender <name> [--pending] → {"id"} */
export async function senderCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { id, sender, providerSlug, approved, workspace } = await run(
    registerSender(context, {
      workspace: text(options, 'workspace'),
      provider: text(options, 'provider'),
      sender: text(options, 'sender'),
      approved: options.pending !== true,
    }),
  );
  return {
    json: { id },
    human: `Registered sender "${sender}" for ${providerSlug} in ${workspace.slug} (id ${id}, ${approved ? 'approved' : 'pending approval'})`,
  };
}

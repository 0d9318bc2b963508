/**
 * Admin commands for what OTP sends use: credits, saved OTP services, message templates and
 * approved senders. Values are checked by the rules the api applies at send time (SPEC §4.3,
 * §8), so a saved service never makes every send with it a 422.
 */
import { addCredits } from '../../db/credits.js';
import {
  deleteOtpService,
  findMessageTemplate,
  findOtpService,
  insertMessageTemplate,
  insertOtpService,
  isApprovedSender,
  type OtpServiceRecord,
  type OtpServiceSettings,
  updateOtpService,
  upsertSenderId,
} from '../../db/otp-settings.js';
import type { Workspace } from '../../db/workspaces.js';
import {
  CODE_LENGTH,
  EXPIRES_IN_MINUTES,
  isOtpPurpose,
  MAX_OTP_SENDER_ID_LENGTH,
  MAX_PURPOSE_LENGTH,
  otpTemplateProblem,
} from '../../domain/otp.js';
import { characters } from '../../domain/validation.js';
import { OWN_PROVIDER_SLUG } from '../../providers/registry.js';
import type { AdminContext } from '../context.js';
import { UsageError } from '../output.js';
import {
  type CommandResult,
  checkProviderOption,
  isUniqueViolation,
  type Options,
  optional,
  RESOURCE_SLUG,
  required,
  slugOption,
  workspaceBySlug,
} from './admin.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DIGITS = /^\d+$/;
const MAX_TEMPLATE_BODY_LENGTH = 1600;
const TEMPLATE_PURPOSES = ['transactional', 'marketing'] as const;

function integerOption(
  options: Options,
  name: string,
  range: { min: number; max: number },
): number | undefined {
  const raw = optional(options, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!DIGITS.test(raw) || value < range.min || value > range.max)
    throw new UsageError(`--${name} must be an integer from ${range.min} to ${range.max}`);
  return value;
}

function serviceSlugOption(options: Options): string {
  const slug = required(options, 'slug');
  if (!UUID.test(slug)) throw new UsageError(`--slug "${slug}" is not an OTP service slug (UUID)`);
  return slug.toLowerCase();
}

/** herald credits add --workspace <slug> --amount <n> → {"balance"} */
export async function creditsAdd(context: AdminContext, options: Options): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const raw = required(options, 'amount');
  const amount = Number(raw);
  if (!DIGITS.test(raw) || !Number.isSafeInteger(amount) || amount <= 0)
    throw new UsageError(`--amount "${raw}" must be a positive integer`);
  const balance = await addCredits(context.sql, workspace.id, amount);
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

/** The given options on top of `base` (defaults for a new service), checked as a whole. */
async function serviceSettings(
  context: AdminContext,
  workspace: Workspace,
  options: Options,
  base: OtpServiceSettings | undefined,
): Promise<OtpServiceSettings> {
  const name = base ? (optional(options, 'name') ?? base.name) : required(options, 'name');
  if (characters(name) > 200) throw new UsageError('--name must be at most 200 characters');

  const purpose = base
    ? (optional(options, 'purpose') ?? base.purpose)
    : required(options, 'purpose');
  if (!isOtpPurpose(purpose)) {
    throw new UsageError(
      `--purpose "${purpose}" must be up to ${MAX_PURPOSE_LENGTH} letters, digits, ".", "_", ":" or "-"`,
    );
  }
  const codeLength =
    integerOption(options, 'code-length', CODE_LENGTH) ?? base?.codeLength ?? CODE_LENGTH.default;
  const expiresInMinutes =
    integerOption(options, 'expires-in-minutes', EXPIRES_IN_MINUTES) ??
    base?.expiresInMinutes ??
    EXPIRES_IN_MINUTES.default;

  // The two message sources are exclusive: giving one replaces the other.
  const givenTemplate = optional(options, 'template');
  const givenMessage = optional(options, 'message-template');
  if (givenTemplate !== undefined && givenMessage !== undefined)
    throw new UsageError('--template and --message-template are exclusive');
  const templateSlug =
    givenTemplate ?? (givenMessage !== undefined ? null : (base?.templateSlug ?? null));
  const messageTemplate =
    givenMessage ?? (givenTemplate !== undefined ? null : (base?.messageTemplate ?? null));
  // A kept template may stop fitting because of a new code length: name what was changed.
  const blame = (given: string | undefined, option: string) =>
    given !== undefined || optional(options, 'code-length') === undefined ? option : 'code-length';

  if (templateSlug !== null) {
    if (!RESOURCE_SLUG.test(templateSlug))
      throw new UsageError(
        `--template "${templateSlug}" must be lowercase letters, digits, - or _ (at most 63)`,
      );
    const template = await findMessageTemplate(context.sql, workspace.id, templateSlug);
    if (!template)
      throw new UsageError(`--template "${templateSlug}" is not a template of ${workspace.slug}`);
    if (!template.enabled)
      throw new UsageError(`--template "${templateSlug}" is disabled in ${workspace.slug}`);
    if (template.purpose !== 'transactional')
      throw new UsageError(`--template "${templateSlug}" is not a transactional template`);
    const problem = otpTemplateProblem(template.body, codeLength);
    if (problem)
      throw new UsageError(
        `--${blame(givenTemplate, 'template')}: the template "${templateSlug}" ${problem}`,
      );
  }
  if (messageTemplate !== null) {
    const problem = otpTemplateProblem(messageTemplate, codeLength);
    if (problem)
      throw new UsageError(
        `--${blame(givenMessage, 'message-template')}: the message template ${problem}`,
      );
  }

  const providerSlug = optional(options, 'provider') ?? base?.providerSlug ?? null;
  if (providerSlug !== null) await checkProviderOption(context, workspace, providerSlug);

  const senderId = optional(options, 'sender-id') ?? base?.senderId ?? null;
  if (senderId !== null) {
    if (characters(senderId) > MAX_OTP_SENDER_ID_LENGTH)
      throw new UsageError(`--sender-id must be at most ${MAX_OTP_SENDER_ID_LENGTH} characters`);
    // Without a provider the service sends through the key's provider or `own`: the service's
    // sender must at least be approved for `own`, as a send would then require.
    const senderProvider = providerSlug ?? OWN_PROVIDER_SLUG;
    if (!(await isApprovedSender(context.sql, workspace.id, senderProvider, senderId))) {
      const option = optional(options, 'sender-id') !== undefined ? 'sender-id' : 'provider';
      throw new UsageError(
        `--${option}: "${senderId}" is not an approved sender of provider ${senderProvider} in ${workspace.slug}`,
      );
    }
  }

  return {
    name,
    purpose,
    codeLength,
    expiresInMinutes,
    templateSlug,
    messageTemplate,
    senderId,
    providerSlug,
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
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const settings = await serviceSettings(context, workspace, options, undefined);
  const service = await insertOtpService(context.sql, workspace.id, settings);
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
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const slug = serviceSlugOption(options);
  if (SETTING_OPTIONS.every((name) => optional(options, name) === undefined))
    throw new UsageError(
      `Give at least one of ${SETTING_OPTIONS.map((name) => `--${name}`).join(', ')}`,
    );
  const current = await findOtpService(context.sql, workspace.id, slug);
  if (!current) throw new UsageError(`--slug "${slug}" is not an OTP service of ${workspace.slug}`);
  const settings = await serviceSettings(context, workspace, options, current);
  const service = await updateOtpService(context.sql, workspace.id, slug, settings);
  if (!service) throw new UsageError(`--slug "${slug}" is not an OTP service of ${workspace.slug}`);
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
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const slug = serviceSlugOption(options);
  if (!(await deleteOtpService(context.sql, workspace.id, slug)))
    throw new UsageError(`--slug "${slug}" is not an OTP service of ${workspace.slug}`);
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
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const slug = slugOption(options, 'slug');
  const body = required(options, 'body');
  if (characters(body) > MAX_TEMPLATE_BODY_LENGTH)
    throw new UsageError(`--body must be at most ${MAX_TEMPLATE_BODY_LENGTH} characters`);
  const name = optional(options, 'name') ?? slug;
  if (characters(name) > 200) throw new UsageError('--name must be at most 200 characters');
  const purpose = optional(options, 'purpose') ?? 'transactional';
  if (!(TEMPLATE_PURPOSES as readonly string[]).includes(purpose))
    throw new UsageError(`--purpose must be one of ${TEMPLATE_PURPOSES.join(', ')}`);
  try {
    const { id } = await insertMessageTemplate(context.sql, {
      workspaceId: workspace.id,
      slug,
      name,
      body,
      purpose: purpose as (typeof TEMPLATE_PURPOSES)[number],
      enabled: options.disabled !== true,
    });
    return {
      json: { id, slug },
      human: `Created ${purpose} template ${slug} (id ${id}) in ${workspace.slug}`,
    };
  } catch (error) {
    if (isUniqueViolation(error))
      throw new UsageError(`--slug: ${workspace.slug} already has a template "${slug}"`);
    throw error;
  }
}

/** herald sender create --workspace <slug> --provider <slug> --sender <name> [--pending] → {"id"} */
export async function senderCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = await workspaceBySlug(context, required(options, 'workspace'));
  const providerSlug = slugOption(options, 'provider');
  // A disabled provider may be enabled again: its senders can be registered meanwhile.
  await checkProviderOption(context, workspace, providerSlug, { mayBeDisabled: true });
  const sender = required(options, 'sender');
  if (characters(sender) > MAX_OTP_SENDER_ID_LENGTH)
    throw new UsageError(`--sender must be at most ${MAX_OTP_SENDER_ID_LENGTH} characters`);
  const approved = options.pending !== true;
  const { id } = await upsertSenderId(context.sql, {
    workspaceId: workspace.id,
    providerSlug,
    sender,
    approved,
  });
  return {
    json: { id },
    human: `Registered sender "${sender}" for ${providerSlug} in ${workspace.slug} (id ${id}, ${approved ? 'approved' : 'pending approval'})`,
  };
}

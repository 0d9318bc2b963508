/**
 * Saved OTP services: settings an OTP send may name by slug. Values are checked by the rules the
 * api applies at send time (docs/spec.md §4.3, §8), so a saved service never makes every send with it
 * a 422. Deleting one leaves codes already sent verifiable by request_id.
 */

import type { TransactionSql } from '../../db/client.js';
import {
  deleteOtpService as deleteOtpServiceRow,
  findMessageTemplate,
  findOtpService,
  insertOtpService,
  isApprovedSender,
  lockOtpService,
  type OtpServiceRecord,
  type OtpServiceSettings,
  updateOtpService as updateOtpServiceRow,
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
import { OWN_PROVIDER_SLUG } from '../../domain/provider-definition.js';
import { UUID } from '../../domain/request-schema.js';
import { characters } from '../../domain/validation.js';
import type { Actor } from '../actor.js';
import { type AuditLine, writeAudit } from '../audit.js';
import type { CommandDeps } from '../deps.js';
import {
  fieldsOf,
  invalid,
  listOf,
  notFound,
  optionalText,
  refuseAll,
  requiredText,
  resourceSlug,
} from '../input.js';
import { checkProvider } from '../providers/providers.js';
import { findWorkspace } from '../team/workspaces.js';

type Deps = Pick<CommandDeps, 'sql'>;

/*
 * Each change takes its `actor` and writes its audit line in the change's transaction
 * (commands/audit.ts).
 */

const MAX_NAME_LENGTH = 200;

/**
 * A service's settings; on update, what is not given (or blank) keeps its value, and `null`
 * clears an optional one: no template and no message is the default message, no sender the
 * provider's default, no provider the key's direct provider, else `own`.
 */
export interface OtpServiceSettingsInput {
  name?: string;
  purpose?: string;
  codeLength?: number;
  expiresInMinutes?: number;
  /** A transactional template's slug, or... */
  template?: string | null;
  /** ...the message itself, with `{code}` once; giving one replaces the other. */
  messageTemplate?: string | null;
  /** Approved for `provider` (for `own` when no provider is set). */
  senderId?: string | null;
  provider?: string | null;
}

const SETTING_FIELDS = [
  'name',
  'purpose',
  'codeLength',
  'expiresInMinutes',
  'template',
  'messageTemplate',
  'senderId',
  'provider',
] as const satisfies readonly (keyof OtpServiceSettingsInput)[];

type Input = OtpServiceSettingsInput & { workspace?: string; slug?: string };
const field = fieldsOf<Input>();

function whole(value: number | undefined, name: 'codeLength' | 'expiresInMinutes') {
  const range = name === 'codeLength' ? CODE_LENGTH : EXPIRES_IN_MINUTES;
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < range.min || value > range.max)
    throw invalid`${field(name)} must be an integer from ${range.min} to ${range.max}`;
  return value;
}

/** An optional setting: given, else cleared by `null`, else the current value. */
function kept(given: string | null | undefined, current: string | null | undefined) {
  if (given === null) return null;
  return optionalText(given) ?? current ?? null;
}

/**
 * The given settings on top of `base` (defaults for a new service), checked as a whole. The
 * template and the sender are read `for share` in `tx`, the transaction that saves the service:
 * an edit or delete of either (which locks it `for update`) waits for the service, then sees it.
 */
async function serviceSettings(
  tx: TransactionSql,
  workspace: Workspace,
  input: OtpServiceSettingsInput,
  base: OtpServiceSettings | undefined,
): Promise<OtpServiceSettings> {
  // Every rule is checked, so a form shows all its refusals at once.
  const checks = refuseAll();
  const name = checks.check(() => {
    const given = base
      ? (optionalText(input.name) ?? base.name)
      : requiredText(input.name, field('name'));
    if (characters(given) > MAX_NAME_LENGTH)
      throw invalid`${field('name')} must be at most ${MAX_NAME_LENGTH} characters`;
    return given;
  });
  const purpose = checks.check(() => {
    const given = base
      ? (optionalText(input.purpose) ?? base.purpose)
      : requiredText(input.purpose, field('purpose'));
    if (!isOtpPurpose(given)) {
      throw invalid`${field('purpose')} "${given}" must be up to ${MAX_PURPOSE_LENGTH} letters, digits, ".", "_", ":" or "-"`;
    }
    return given;
  });
  const givenCodeLength = checks.check(() => whole(input.codeLength, 'codeLength'));
  const codeLength = givenCodeLength ?? base?.codeLength ?? CODE_LENGTH.default;
  const expiresInMinutes =
    checks.check(() => whole(input.expiresInMinutes, 'expiresInMinutes')) ??
    base?.expiresInMinutes ??
    EXPIRES_IN_MINUTES.default;
  // A message that fits only a refused code length is not judged by the default length.
  const codeLengthRefused = input.codeLength !== undefined && givenCodeLength === undefined;

  // The two message sources are exclusive: giving one replaces the other.
  const givenTemplate = optionalText(input.template ?? undefined);
  const givenMessage = optionalText(input.messageTemplate ?? undefined);
  const exclusive = givenTemplate !== undefined && givenMessage !== undefined;
  if (exclusive)
    checks.check(() => {
      throw invalid`${field('template')} and ${field('messageTemplate')} are exclusive`;
    });
  const templateSlug =
    givenTemplate ??
    (givenMessage !== undefined || input.template === null ? null : (base?.templateSlug ?? null));
  const messageTemplate =
    givenMessage ??
    (givenTemplate !== undefined || input.messageTemplate === null
      ? null
      : (base?.messageTemplate ?? null));
  // A kept template may stop fitting because of a new code length: name what was changed.
  const blame = (given: string | undefined, name: 'template' | 'messageTemplate') =>
    field(given !== undefined || input.codeLength === undefined ? name : 'codeLength');

  if (templateSlug !== null && !exclusive) {
    await checks.checkAsync(async () => {
      resourceSlug(templateSlug, field('template'));
      const template = await findMessageTemplate(tx, workspace.id, templateSlug, 'share');
      if (!template)
        throw invalid`${field('template')} "${templateSlug}" is not a template of ${workspace.slug}`;
      if (!template.enabled)
        throw invalid`${field('template')} "${templateSlug}" is disabled in ${workspace.slug}`;
      if (template.purpose !== 'transactional')
        throw invalid`${field('template')} "${templateSlug}" is not a transactional template`;
      const problem = codeLengthRefused ? null : otpTemplateProblem(template.body, codeLength);
      if (problem)
        throw invalid`${blame(givenTemplate, 'template')}: the template "${templateSlug}" ${problem}`;
    });
  }
  if (messageTemplate !== null && !exclusive && !codeLengthRefused) {
    checks.check(() => {
      const problem = otpTemplateProblem(messageTemplate, codeLength);
      if (problem)
        throw invalid`${blame(givenMessage, 'messageTemplate')}: the message template ${problem}`;
    });
  }

  const providerSlug = kept(input.provider, base?.providerSlug);
  const providerRefused =
    providerSlug !== null &&
    (await checks.checkAsync(async () => {
      await checkProvider({ sql: tx }, workspace, providerSlug, field('provider'));
      return true;
    })) === undefined;

  const givenSender = optionalText(input.senderId ?? undefined);
  const senderId = kept(input.senderId, base?.senderId);
  if (senderId !== null) {
    await checks.checkAsync(async () => {
      if (characters(senderId) > MAX_OTP_SENDER_ID_LENGTH)
        throw invalid`${field('senderId')} must be at most ${MAX_OTP_SENDER_ID_LENGTH} characters`;
      // An unknown provider is refused once, above; its senders are not looked for.
      if (providerRefused) return;
      // Without a provider the service sends through the key's provider or `own`: the service's
      // sender must at least be approved for `own`, as a send would then require.
      const senderProvider = providerSlug ?? OWN_PROVIDER_SLUG;
      if (!(await isApprovedSender(tx, workspace.id, senderProvider, senderId, 'share'))) {
        const blamed = field(givenSender !== undefined ? 'senderId' : 'provider');
        throw invalid`${blamed}: "${senderId}" is not an approved sender of provider ${senderProvider} in ${workspace.slug}`;
      }
    });
  }
  checks.done();
  if (name === undefined || purpose === undefined) throw new Error('refused above');

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

function serviceSlug(slug: string | undefined): string {
  const given = requiredText(slug, field('slug'));
  if (!UUID.test(given))
    throw invalid`${field('slug')} "${given}" is not an OTP service slug (UUID)`;
  return given.toLowerCase();
}

/** A created or updated service in the log: by its name, its slug beside. */
const savedLine = (action: string, service: OtpServiceRecord): AuditLine => ({
  action,
  target: `OTP service ${service.name}`,
  details: { slug: service.slug },
});

export interface SavedOtpService {
  service: OtpServiceRecord;
  workspace: Workspace;
}

export async function createOtpService(
  deps: Deps,
  input: OtpServiceSettingsInput & { workspace?: string },
  actor: Actor,
): Promise<SavedOtpService> {
  const workspace = await findWorkspace(deps, input.workspace);
  const service = await deps.sql.begin(async (tx) => {
    const settings = await serviceSettings(tx, workspace, input, undefined);
    const service = await insertOtpService(tx, workspace.id, settings);
    await writeAudit(tx, actor, workspace.id, savedLine('otp_service.created', service));
    return service;
  });
  return { service, workspace };
}

/** One service of the workspace, by slug. */
export async function showOtpService(
  deps: Deps,
  input: { workspace?: string; slug?: string },
): Promise<SavedOtpService> {
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = serviceSlug(input.slug);
  const service = await findOtpService(deps.sql, workspace.id, slug);
  if (!service)
    throw notFound`${field('slug')} "${slug}" is not an OTP service of ${workspace.slug}`;
  return { service, workspace };
}

/** Changes the settings given (`null` clears an optional one); the others keep their value. */
export async function updateOtpService(
  deps: Deps,
  input: OtpServiceSettingsInput & { workspace?: string; slug?: string },
  actor: Actor,
): Promise<SavedOtpService> {
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = serviceSlug(input.slug);
  const given = (name: (typeof SETTING_FIELDS)[number]) => {
    const value = input[name];
    return typeof value === 'string' ? optionalText(value) !== undefined : value !== undefined;
  };
  if (!SETTING_FIELDS.some(given))
    throw invalid`Give at least one of ${listOf(SETTING_FIELDS.map((name) => field(name)))}`;
  const unknown = () =>
    notFound`${field('slug')} "${slug}" is not an OTP service of ${workspace.slug}`;
  const service = await deps.sql.begin(async (tx) => {
    const current = await lockOtpService(tx, workspace.id, slug);
    if (!current) throw unknown();
    const settings = await serviceSettings(tx, workspace, input, current);
    const service = await updateOtpServiceRow(tx, workspace.id, slug, settings);
    if (service)
      await writeAudit(tx, actor, workspace.id, savedLine('otp_service.updated', service));
    return service;
  });
  if (!service) throw unknown();
  return { service, workspace };
}

/** Codes already sent with the service still verify. */
export async function deleteOtpService(
  deps: Deps,
  input: { workspace?: string; slug?: string },
  actor: Actor,
): Promise<{ slug: string; workspace: Workspace }> {
  const workspace = await findWorkspace(deps, input.workspace);
  const slug = serviceSlug(input.slug);
  await deps.sql.begin(async (tx) => {
    if (!(await deleteOtpServiceRow(tx, workspace.id, slug)))
      throw notFound`${field('slug')} "${slug}" is not an OTP service of ${workspace.slug}`;
    await writeAudit(tx, actor, workspace.id, {
      action: 'otp_service.deleted',
      target: `OTP service ${slug}`,
      details: {},
    });
  });
  return { slug, workspace };
}

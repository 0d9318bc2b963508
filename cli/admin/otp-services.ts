/** herald otp-service create|list|update|delete: options in, use-case, output. */

import { listWorkspaceOtpServices } from '../../commands/otp/service-listing.js';
import {
  createOtpService,
  deleteOtpService,
  type OtpServiceSettingsInput,
  updateOtpService,
} from '../../commands/otp/services.js';
import type { OtpServiceRecord } from '../../db/otp-settings.js';
import type { AdminContext } from '../context.js';
import { listing } from '../output.js';
import { type CommandResult, type Options, run, text, wholeNumber } from './options.js';
import { type AdminCommand, type OptionSpec, oneOf, optional, required } from './table.js';

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
    createOtpService(
      context,
      {
        workspace: text(options, 'workspace'),
        ...serviceSettings(options),
      },
      context.actor,
    ),
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
    updateOtpService(
      context,
      {
        workspace: text(options, 'workspace'),
        slug: text(options, 'slug'),
        ...serviceSettings(options),
      },
      context.actor,
    ),
  );
  return {
    json: presentService(service),
    human: `Updated OTP service ${service.name} (${service.slug}) in ${workspace.slug}`,
  };
}

/** herald otp-service list --workspace <slug> → {"otp_services": [...]}, as the console lists them */
export async function otpServiceList(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const workspace = text(options, 'workspace');
  const services = await run(listWorkspaceOtpServices(context, { workspace }));
  return {
    json: { otp_services: services.map(presentService) },
    human: listing(
      services,
      ['SLUG', 'NAME', 'PURPOSE', 'CODE', 'EXPIRES', 'MESSAGE', 'SENDER ID', 'PROVIDER'],
      (service) => [
        service.slug,
        service.name,
        service.purpose,
        `${service.codeLength} digits`,
        `${service.expiresInMinutes} min`,
        service.templateSlug ? `template ${service.templateSlug}` : service.messageTemplate,
        service.senderId,
        service.providerSlug,
      ],
      `${workspace?.trim()} has no OTP services`,
    ),
  };
}

/** herald otp-service delete --workspace <slug> --slug <uuid>; codes already sent still verify. */
export async function otpServiceDelete(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { slug, workspace } = await run(
    deleteOtpService(
      context,
      {
        workspace: text(options, 'workspace'),
        slug: text(options, 'slug'),
      },
      context.actor,
    ),
  );
  return {
    json: { slug, deleted: true },
    human: `Deleted OTP service ${slug} from ${workspace.slug}`,
  };
}

/** The options that set an OTP service's settings: create's, every one optional on update. */
const NAME = required('name', '<name>');
const PURPOSE = required('purpose', '<purpose>');
const CODE_LENGTH = optional('code-length', '6-8');
const EXPIRES_IN_MINUTES = optional('expires-in-minutes', '1-10');
const TEMPLATE = optional('template', '<slug>');
const MESSAGE_TEMPLATE = optional('message-template', '<text with {code}>');
const SENDER_ID = optional('sender-id', '<sender>');
const PROVIDER = optional('provider', '<slug>');
const SETTINGS: OptionSpec[] = [
  NAME,
  PURPOSE,
  CODE_LENGTH,
  EXPIRES_IN_MINUTES,
  TEMPLATE,
  MESSAGE_TEMPLATE,
  SENDER_ID,
  PROVIDER,
].map((option) => ({ ...option, required: false }));

const WORKSPACE = required('workspace', '<slug>');
const SERVICE_SLUG = required('slug', '<uuid>');

export const OTP_SERVICE_COMMANDS: AdminCommand[] = [
  {
    name: 'otp-service create',
    run: otpServiceCreate,
    synopses: [
      [
        [WORKSPACE, NAME, PURPOSE],
        [CODE_LENGTH, EXPIRES_IN_MINUTES],
        [oneOf(TEMPLATE, MESSAGE_TEMPLATE)],
        [SENDER_ID, PROVIDER],
      ],
    ],
  },
  { name: 'otp-service list', run: otpServiceList, synopses: [[[WORKSPACE]]] },
  {
    name: 'otp-service update',
    run: otpServiceUpdate,
    synopses: [[[WORKSPACE, SERVICE_SLUG, { label: 'any option of create', options: SETTINGS }]]],
  },
  {
    name: 'otp-service delete',
    run: otpServiceDelete,
    synopses: [[[WORKSPACE, SERVICE_SLUG]]],
  },
];

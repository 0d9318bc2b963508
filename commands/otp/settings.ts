import type { ApiKeyPrincipal } from '../../db/api-keys.js';
import type { Sql } from '../../db/client.js';
import type { BillingSource } from '../../db/otp-requests.js';
import { findMessageTemplate, findOtpService, isApprovedSender } from '../../db/otp-settings.js';
import { findProvider, type ProviderRecord } from '../../db/providers.js';
import { findMemberPermissions } from '../../db/users.js';
import { validationError } from '../../domain/errors.js';
import type { GuardSettings } from '../../domain/fraud-guard.js';
import {
  CODE_LENGTH,
  DEFAULT_OTP_TEMPLATE,
  EXPIRES_IN_MINUTES,
  type OtpSendRequest,
  otpTemplateProblem,
  renderOtpMessage,
} from '../../domain/otp.js';
import { isAustralianMobile, serves } from '../../domain/phone.js';
import { declaredCountries, OWN_PROVIDER_SLUG } from '../../domain/provider-definition.js';
import { countSegments } from '../../domain/segments.js';
import { checkOtpRecipient, guardFor } from '../fraud-guard/send-checks.js';

/** Everything an OTP send needs, with the service, template, provider and sender settled. */
export interface ResolvedOtpSend {
  recipient: string;
  purpose: string;
  serviceSlug: string | null;
  bodyTemplate: string;
  segments: number;
  codeLength: number;
  expiresInMinutes: number;
  senderId: string | null;
  providerSlug: string;
  /** Its record as read for these checks; null for `own`. */
  provider: ProviderRecord | null;
  billingSource: BillingSource;
  /** The fraud guard's settings for this send (the service's over the workspace's). */
  guard: GuardSettings;
}

const invalid = (
  field: string,
  message = `The selected ${field.replaceAll('_', ' ')} is invalid.`,
) => validationError({ [field]: [message] });

/**
 * docs/spec.md §4.3: a service's current settings or the request's own; the template readable by the
 * key's user; routing from the request, else the key's direct provider, else `own`; a sender
 * approved for that provider. The own provider bills credits and takes Australian mobiles only.
 */
export async function resolveOtpSend(
  sql: Sql,
  principal: ApiKeyPrincipal,
  request: OtpSendRequest,
): Promise<ResolvedOtpSend> {
  const settings = request.serviceSlug
    ? await findOtpService(sql, principal.workspaceId, request.serviceSlug)
    : request;
  if (!settings) throw invalid('service_slug');
  const field = (name: string) => (request.serviceSlug ? 'service_slug' : name);

  const codeLength = settings.codeLength ?? CODE_LENGTH.default;
  let bodyTemplate = settings.messageTemplate ?? DEFAULT_OTP_TEMPLATE;
  if (settings.templateSlug) {
    const template = await findMessageTemplate(sql, principal.workspaceId, settings.templateSlug);
    const readable =
      principal.userId !== null &&
      (await findMemberPermissions(sql, principal.workspaceId, principal.userId)).includes(
        'messages.read',
      );
    if (!template?.enabled || template.purpose !== 'transactional' || !readable)
      throw invalid(field('template_slug'));
    const problem = otpTemplateProblem(template.body, codeLength);
    if (problem) throw invalid(field('template_slug'), `The selected template ${problem}.`);
    bodyTemplate = template.body;
  }

  // docs/spec.md §4.3: the key's direct provider applies only when the request gives no routing field.
  const requestRouted = request.routingType !== null || request.providerSlug !== null;
  const keyProvider =
    !requestRouted && principal.routingType === 'direct' ? principal.providerSlug : null;
  const providerSlug = settings.providerSlug ?? keyProvider ?? OWN_PROVIDER_SLUG;
  let provider: ProviderRecord | null = null;
  if (providerSlug !== OWN_PROVIDER_SLUG) {
    provider = (await findProvider(sql, principal.workspaceId, providerSlug)) ?? null;
    if (!provider?.active) throw invalid(field('provider_slug'));
    if (!serves(declaredCountries(provider), request.recipient))
      throw invalid(
        'recipient',
        'The recipient field must be a number in a country the selected provider serves.',
      );
  } else if (!isAustralianMobile(request.recipient)) {
    throw invalid(
      'recipient',
      'The recipient field must be an Australian mobile number for the selected provider.',
    );
  }
  if (
    settings.senderId &&
    !(await isApprovedSender(sql, principal.workspaceId, providerSlug, settings.senderId))
  )
    throw invalid(field('sender_id'));
  const guard = await guardFor(
    sql,
    principal.workspaceId,
    request.serviceSlug,
    principal.guardSettings,
  );
  checkOtpRecipient(sql, principal.workspaceId, guard, request.recipient);

  return {
    recipient: request.recipient,
    purpose: settings.purpose as string,
    serviceSlug: request.serviceSlug,
    bodyTemplate,
    segments: countSegments(renderOtpMessage(bodyTemplate, '0'.repeat(codeLength))).segments,
    codeLength,
    expiresInMinutes: settings.expiresInMinutes ?? EXPIRES_IN_MINUTES.default,
    senderId: settings.senderId,
    providerSlug,
    provider,
    billingSource: providerSlug === OWN_PROVIDER_SLUG ? 'credits' : 'connected_provider',
    guard,
  };
}

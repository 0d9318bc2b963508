import type { ApiKeyRouting } from '../../db/api-keys.js';
import type { DailyCap } from '../../db/campaigns.js';
import type { Sql } from '../../db/client.js';
import { isApprovedSender } from '../../db/otp-settings.js';
import { findFailoverRoute, findProvider, findProviders } from '../../db/providers.js';
import { validationError } from '../../domain/errors.js';
import type { GuardOverrides } from '../../domain/fraud-guard.js';
import { type Countries, serves } from '../../domain/phone.js';
import { declaredCountries, OWN_PROVIDER_SLUG } from '../../domain/provider-definition.js';
import type { SendRequest } from '../../domain/send-request.js';
import { checkSmsRecipients, guardFor } from '../fraud-guard/send-checks.js';

export interface ResolvedRouting {
  routingType: 'direct' | 'failover';
  providerSlug: string | null;
  failoverRouteSlug: string | null;
  /** The workspace's daily cap the send is held to (db/campaigns.ts insertCampaign). */
  dailyCap: DailyCap | null;
}

/** Each recipient must be in a country one of the providers serves (each declares its own). */
function checkDestinations(recipients: string[], served: Countries[], target: string) {
  const errors: Record<string, string[]> = {};
  recipients.forEach((recipient, index) => {
    if (!served.some((countries) => serves(countries, recipient)))
      errors[`recipients.${index}`] = [
        `The recipients.${index} field must be a number in a country the selected ${target} serves.`,
      ];
  });
  if (Object.keys(errors).length > 0) throw validationError(errors);
}

/**
 * A sender through `own` goes out under the operator's account, so it must be one the operator
 * approved for the workspace: the rule OTP sends follow (isApprovedSender), numbers included. A
 * workspace's own providers are its own accounts: their vendors hold the sender rules there.
 */
async function checkOwnSender(
  sql: Sql,
  workspaceId: number,
  senderId: string | null,
  providerSlugs: string[],
) {
  if (senderId === null || !providerSlugs.includes(OWN_PROVIDER_SLUG)) return;
  if (!(await isApprovedSender(sql, workspaceId, OWN_PROVIDER_SLUG, senderId)))
    throw validationError({
      sender_id: [
        `The selected sender id is not an approved sender of the ${OWN_PROVIDER_SLUG} provider.`,
      ],
    });
}

/**
 * docs/spec.md §4.1 routing rules: explicit request routing wins; otherwise the key's routing; a key
 * without routing uses the `own` provider. Unknown, inactive or disabled targets are 422s, and
 * so is a sender through `own` that its operator has not approved.
 * `herald campaign create` passes a principal without routing: no key stands behind it. Then the
 * fraud guard's geo permissions (commands/fraud-guard/send-checks.ts) and its daily cap.
 */
export async function resolveRouting(
  sql: Sql,
  principal: ApiKeyRouting & { workspaceId: number; guardSettings?: GuardOverrides | null },
  request: SendRequest,
): Promise<ResolvedRouting> {
  const target = await resolveTarget(sql, principal, request);
  const guard = await guardFor(sql, principal.workspaceId, null, principal.guardSettings);
  checkSmsRecipients(sql, principal.workspaceId, guard, request.recipients);
  const dailyCap =
    guard.dailySegments === null
      ? null
      : { segments: guard.dailySegments, nearPercent: guard.capNearPercent };
  return { ...target, dailyCap };
}

async function resolveTarget(
  sql: Sql,
  principal: ApiKeyRouting & { workspaceId: number },
  request: SendRequest,
): Promise<Omit<ResolvedRouting, 'dailyCap'>> {
  const explicit = request.routingType !== null || request.providerSlug !== null;
  const source = explicit ? request : principal;
  const routingType = source.routingType ?? 'direct';
  const field = (name: string) => (explicit ? name : `${name} (from the API key)`);

  if (routingType === 'failover') {
    const slug = source.failoverRouteSlug ?? '';
    const route = await findFailoverRoute(sql, principal.workspaceId, slug);
    if (!route?.enabled) {
      throw validationError({
        failover_route_slug: [`The selected ${field('failover route slug')} is invalid.`],
      });
    }
    const providers = await findProviders(sql, principal.workspaceId, route.providerSlugs);
    if (request.senderId === null && providers.some((provider) => provider.requiresSenderId)) {
      throw validationError({
        sender_id: ['The sender id field is required for the selected failover route.'],
      });
    }
    const served = route.providerSlugs.map((slug) => {
      const provider = providers.find((candidate) => candidate.slug === slug);
      return provider ? declaredCountries(provider) : 'all';
    });
    checkDestinations(request.recipients, served, 'failover route');
    await checkOwnSender(sql, principal.workspaceId, request.senderId, route.providerSlugs);
    return { routingType, providerSlug: null, failoverRouteSlug: route.slug };
  }

  const slug = source.providerSlug ?? OWN_PROVIDER_SLUG;
  if (slug !== OWN_PROVIDER_SLUG) {
    const provider = await findProvider(sql, principal.workspaceId, slug);
    if (!provider?.active) {
      throw validationError({
        provider_slug: [`The selected ${field('provider slug')} is invalid.`],
      });
    }
    if (provider.requiresSenderId && request.senderId === null) {
      throw validationError({
        sender_id: ['The sender id field is required for the selected provider.'],
      });
    }
    checkDestinations(request.recipients, [declaredCountries(provider)], 'provider');
  }
  await checkOwnSender(sql, principal.workspaceId, request.senderId, [slug]);
  return { routingType: 'direct', providerSlug: slug, failoverRouteSlug: null };
}

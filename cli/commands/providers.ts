/** herald provider create|enable|disable, route create: options in, use-case, output. */
import { createFailoverRoute } from '../../commands/failover-routes.js';
import {
  createProvider,
  disableProvider,
  enableProvider,
  type ProviderInput,
} from '../../commands/providers.js';
import type { AdminContext } from '../context.js';
import { type CommandResult, list, type Options, run, text, wholeNumber } from './options.js';

const TWILIO_OPTIONS = ['account-sid', 'auth-token', 'from', 'messaging-service-sid'];
const SMPP_OPTIONS = [
  'host',
  'port',
  'system-id',
  'password',
  'system-type',
  'source-addr',
  'window',
];

/** Every option of `provider create` beyond workspace, slug, name and type. */
export const PROVIDER_CREATE_OPTIONS = [
  'base-url',
  'requires-sender-id',
  'messages-per-second',
  'countries',
  ...TWILIO_OPTIONS,
  ...SMPP_OPTIONS,
];

export async function providerCreate(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { id, slug, type, workspace } = await run(
    createProvider(context, {
      workspace: text(options, 'workspace'),
      slug: text(options, 'slug'),
      name: text(options, 'name'),
      type: text(options, 'type'),
      baseUrl: text(options, 'base-url'),
      requiresSenderId: options['requires-sender-id'] === true,
      messagesPerSecond: wholeNumber(options, 'messages-per-second'),
      countries: list(options, 'countries'),
      accountSid: text(options, 'account-sid'),
      authToken: text(options, 'auth-token'),
      from: text(options, 'from'),
      messagingServiceSid: text(options, 'messaging-service-sid'),
      host: text(options, 'host'),
      port: text(options, 'port'),
      systemId: text(options, 'system-id'),
      password: text(options, 'password'),
      systemType: text(options, 'system-type'),
      sourceAddr: text(options, 'source-addr'),
      window: text(options, 'window'),
    }),
  );
  return {
    json: { id, slug },
    human: `Created ${type} provider ${slug} (id ${id}) in ${workspace.slug}`,
  };
}

async function providerSetActive(context: AdminContext, options: Options, active: boolean) {
  const input: ProviderInput = {
    workspace: text(options, 'workspace'),
    slug: text(options, 'slug'),
  };
  const { slug } = await run(
    active ? enableProvider(context, input) : disableProvider(context, input),
  );
  return {
    json: { slug, active },
    human: `Provider ${slug} is now ${active ? 'active' : 'inactive'}`,
  };
}

export const providerEnable = (context: AdminContext, options: Options) =>
  providerSetActive(context, options, true);
export const providerDisable = (context: AdminContext, options: Options) =>
  providerSetActive(context, options, false);

export async function routeCreate(context: AdminContext, options: Options): Promise<CommandResult> {
  const { id, slug, providerSlugs } = await run(
    createFailoverRoute(context, {
      workspace: text(options, 'workspace'),
      slug: text(options, 'slug'),
      name: text(options, 'name'),
      providers: list(options, 'providers'),
    }),
  );
  return {
    json: { id, slug, providers: providerSlugs },
    human: `Created failover route ${slug} (id ${id}): ${providerSlugs.join(' → ')}`,
  };
}

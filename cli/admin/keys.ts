/** herald key create|list|revoke|rate: options in, use-case, output. */
import {
  createApiKey,
  DEFAULT_KEY_RATE,
  listWorkspaceApiKeys,
  revokeApiKey,
  setApiKeyRate,
} from '../../commands/team/api-keys.js';
import type { ApiKeyListing, KeyRate } from '../../db/api-keys.js';
import { formatRequestRate } from '../../domain/fraud-guard.js';
import { type AdminContext, operatorActor } from '../context.js';
import { listing, tableTime } from '../output.js';
import { type CommandResult, idOption, list, type Options, run, text } from './options.js';
import { type AdminCommand, oneOf, optional, required } from './table.js';

/** A key's rate as `--rate` takes it: `100/s`, `off`, or `default` (its workspace's key rate). */
const shownRate = (rate: KeyRate) => (rate === null ? DEFAULT_KEY_RATE : formatRequestRate(rate));

export async function keyCreate(context: AdminContext, options: Options): Promise<CommandResult> {
  const { id, token, prefix, abilities, rate } = await run(
    createApiKey(
      context,
      {
        workspace: text(options, 'workspace'),
        abilities: list(options, 'abilities'),
        provider: text(options, 'provider'),
        failoverRoute: text(options, 'failover-route'),
        user: text(options, 'user'),
        name: text(options, 'name'),
        rate: text(options, 'rate'),
      },
      operatorActor(),
    ),
  );
  return {
    json: { id, token, prefix, abilities, rate: shownRate(rate) },
    human: `Created API key ${id} (${prefix}) with ${abilities.join(', ')}${
      rate === null ? '' : `, rate ${shownRate(rate)}`
    }.\nToken (shown once): ${token}`,
  };
}

/** Where a key's sends go: its provider, its failover route, or the workspace's default. */
const routingOf = (key: ApiKeyListing) =>
  key.providerSlug
    ? `provider ${key.providerSlug}`
    : key.failoverRouteSlug
      ? `route ${key.failoverRouteSlug}`
      : 'default';

/**
 * herald key list --workspace <slug> → {"keys": [...]}, live ones first: prefixes only, as a
 * token is shown once, when created, and stored only as a hash.
 */
export async function keyList(context: AdminContext, options: Options): Promise<CommandResult> {
  const workspace = text(options, 'workspace');
  const keys = await run(listWorkspaceApiKeys(context, { workspace }));
  return {
    json: {
      keys: keys.map((key) => ({
        id: key.id,
        name: key.name,
        prefix: key.prefix,
        abilities: key.abilities,
        user_email: key.userEmail,
        provider_slug: key.providerSlug,
        failover_route_slug: key.failoverRouteSlug,
        created_at: key.createdAt.toISOString(),
        last_used_at: key.lastUsedAt?.toISOString() ?? null,
        revoked_at: key.revokedAt?.toISOString() ?? null,
      })),
    },
    human: listing(
      keys,
      ['ID', 'PREFIX', 'NAME', 'USER', 'ABILITIES', 'ROUTING', 'LAST USED (UTC)', 'STATUS'],
      (key) => [
        key.id,
        key.prefix,
        key.name,
        key.userEmail,
        key.abilities.join(','),
        routingOf(key),
        tableTime(key.lastUsedAt),
        key.revokedAt ? `revoked ${tableTime(key.revokedAt)}` : 'live',
      ],
      `${workspace?.trim()} has no API keys`,
    ),
  };
}

export async function keyRevoke(context: AdminContext, options: Options): Promise<CommandResult> {
  const { id, newlyRevoked } = await run(
    revokeApiKey(context, { id: idOption(options, 'key') }, operatorActor()),
  );
  return {
    // `already_revoked` tells a second revoke apart; the audit log records only the first (the use-case).
    json: { id, revoked: true, ...(!newlyRevoked && { already_revoked: true }) },
    human: newlyRevoked ? `Revoked API key ${id}` : `API key ${id} was already revoked`,
  };
}

/** herald key rate --id <id> --rate <n>/<s|m>|off|default → {"id", "rate"} */
export async function keyRate(context: AdminContext, options: Options): Promise<CommandResult> {
  const { id, rate } = await run(
    setApiKeyRate(
      context,
      { id: idOption(options, 'key'), rate: text(options, 'rate') },
      operatorActor(),
    ),
  );
  return {
    json: { id, rate: shownRate(rate) },
    human:
      rate === null
        ? `API key ${id} now follows its workspace's key rate (herald guard show)`
        : rate === 'off'
          ? `API key ${id} now has no rate limit of its own (its workspace's rate still applies)`
          : `API key ${id} is now limited to ${shownRate(rate)}`,
  };
}

const RATE = '<n>/<s|m>|off';

export const KEY_COMMANDS: AdminCommand[] = [
  {
    name: 'key create',
    run: keyCreate,
    synopses: [
      [
        [
          required('workspace', '<slug>'),
          required('abilities', '<a,b,...>'),
          optional('user', '<email>'),
          optional('name', '<name>'),
        ],
        [
          oneOf(optional('provider', '<slug>'), optional('failover-route', '<slug>')),
          optional('rate', RATE),
        ],
      ],
    ],
  },
  { name: 'key list', run: keyList, synopses: [[[required('workspace', '<slug>')]]] },
  { name: 'key revoke', run: keyRevoke, synopses: [[[required('id', '<id>')]]] },
  {
    name: 'key rate',
    run: keyRate,
    synopses: [[[required('id', '<id>'), required('rate', `${RATE}|default`)]]],
    summary: "default: the workspace's key rate",
  },
];

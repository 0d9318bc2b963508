/** herald key create|revoke: options in, use-case, output. */
import { createApiKey, revokeApiKey } from '../../commands/api-keys.js';
import type { AdminContext } from '../context.js';
import { type CommandResult, idOption, list, type Options, run, text } from './options.js';
import { type AdminCommand, oneOf, optional, required } from './table.js';

export async function keyCreate(context: AdminContext, options: Options): Promise<CommandResult> {
  const { id, token, prefix, abilities } = await run(
    createApiKey(context, {
      workspace: text(options, 'workspace'),
      abilities: list(options, 'abilities'),
      provider: text(options, 'provider'),
      failoverRoute: text(options, 'failover-route'),
      user: text(options, 'user'),
      name: text(options, 'name'),
    }),
  );
  return {
    json: { id, token, prefix, abilities },
    human: `Created API key ${id} (${prefix}) with ${abilities.join(', ')}.\nToken (shown once): ${token}`,
  };
}

export async function keyRevoke(context: AdminContext, options: Options): Promise<CommandResult> {
  const { id, newlyRevoked } = await run(revokeApiKey(context, { id: idOption(options, 'key') }));
  return {
    // `already_revoked` tells a second revoke apart; the audit log records only the first.
    json: { id, revoked: true, ...(!newlyRevoked && { already_revoked: true }) },
    human: newlyRevoked ? `Revoked API key ${id}` : `API key ${id} was already revoked`,
  };
}

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
        [oneOf(optional('provider', '<slug>'), optional('failover-route', '<slug>'))],
      ],
    ],
  },
  { name: 'key revoke', run: keyRevoke, synopses: [[[required('id', '<id>')]]] },
];

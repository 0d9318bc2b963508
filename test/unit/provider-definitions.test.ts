/**
 * Each vendor folder's definition drives `herald provider create`: the options it accepts come
 * from the usage it lays out, so a field left out of that layout could never be given.
 */
import { describe, expect, it } from 'vitest';
import { PROVIDER_COMMANDS } from '../../cli/admin/providers.js';
import { optionsOf, usageOf } from '../../cli/admin/table.js';
import { ProviderFieldsRefusal } from '../../domain/provider-definition.js';
import { PROVIDER_DEFINITIONS } from '../../providers/registry.js';

const providerCreate = PROVIDER_COMMANDS.find((command) => command.name === 'provider create');

describe('provider definitions', () => {
  it('lay out every field of their own, so the CLI accepts each one', () => {
    for (const definition of PROVIDER_DEFINITIONS) {
      const laidOut = definition.usage.lines.flat().map((entry) => entry.split(' ')[0]);
      const missing = definition.fields
        .map((field) => field.name)
        .filter((name) => !laidOut.includes(name));
      expect({ type: definition.type, missing }).toEqual({ type: definition.type, missing: [] });
    }
  });

  it('give `provider create` one usage form per type and the union of their options', () => {
    expect(providerCreate?.synopses).toHaveLength(PROVIDER_DEFINITIONS.length);
    const options = optionsOf(providerCreate as NonNullable<typeof providerCreate>).map(
      (option) => option.name,
    );
    expect(options).toEqual([
      'workspace',
      'slug',
      'type',
      'base-url',
      'name',
      'requires-sender-id',
      'messages-per-second',
      'countries',
      'account-sid',
      'auth-token',
      'from',
      'messaging-service-sid',
      'host',
      'port',
      'system-id',
      'password',
      'system-type',
      'source-addr',
      'window',
    ]);
  });

  it('render the SMPP form as the usage text always showed it', () => {
    const smppOnly = { ...(providerCreate as NonNullable<typeof providerCreate>) };
    smppOnly.synopses = [smppOnly.synopses[2] as (typeof smppOnly.synopses)[number]];
    expect(usageOf([smppOnly])).toBe(
      [
        '  provider create --workspace <slug> --slug <slug> --type smpp --host <host> --port <port>',
        '                  --system-id <id> --password <pw> [--system-type <type>]',
        '                  [--source-addr <default sender>] [--window <1-100, default 10>]',
        '                  [--name <name>] [--requires-sender-id] [--messages-per-second <n, default 50>]',
        '                  (SMPP 3.4 transceiver; the password is stored encrypted, never shown)',
        '',
      ].join('\n'),
    );
  });

  it('refuse a create input by field reference, never echoing a secret', () => {
    const twilio = PROVIDER_DEFINITIONS.find((definition) => definition.type === 'twilio');
    let refusal: unknown;
    try {
      twilio?.configure({ accountSid: `AC${'0'.repeat(32)}`, authToken: 'short' });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ProviderFieldsRefusal);
    expect((refusal as ProviderFieldsRefusal).parts).toEqual([
      '',
      { field: 'authToken' },
      ' must be at least 8 characters without spaces',
    ]);
  });
});

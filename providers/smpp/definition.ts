/**
 * SMPP 3.4 as a provider type: an SMSC's host and port, a transceiver account (encrypted), bind
 * settings. Only workers bind (providers/smpp/sessions.ts); one SMSC account serves one active
 * provider, because receipts and replies are assigned by the bind they arrive on.
 */
import { E164_ADDRESS } from '../../domain/phone.js';
import { declaredCountries, refuse } from '../../domain/provider-definition.js';
import { ALPHANUMERIC_SENDER, field, optionalText, requiredText } from '../field-rules.js';
import type { VendorDefinition } from '../types.js';
import { SMPP_WEBHOOK_ANSWER, SmppProvider } from './adapter.js';
import { smppConfigOf, smppCredentials, smppSettings } from './config.js';
import { testSmppBind } from './connection-test.js';

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const IP_ADDRESS = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9A-Fa-f:]+\]?)$/;

type Input = Parameters<VendorDefinition['configure']>[0];

/** Printable ASCII of SMPP 3.4's C-octet strings, which hold `max` characters before the NUL. */
function smppString(input: Input, name: 'systemId' | 'systemType', max: number) {
  const value = optionalText(input, name);
  if (value !== undefined && !new RegExp(`^[\\x21-\\x7e]{1,${max}}$`).test(value))
    throw refuse`${field(name)} must be 1 to ${max} printable ASCII characters without spaces (SMPP 3.4)`;
  return value;
}

function wholeNumberText(input: Input, name: 'port' | 'window', min: number, max: number) {
  const value = optionalText(input, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw refuse`${field(name)} must be a whole number from ${min} to ${max}`;
  return String(Number(value));
}

export const smpp: VendorDefinition = {
  type: 'smpp',
  settings: smppSettings,
  credentials: smppCredentials,
  fields: [
    { name: 'host', value: '<host>', required: true, setting: 'host' },
    { name: 'port', value: '<port>', required: true, setting: 'port' },
    { name: 'systemId', value: '<id>', required: true, credential: 'system_id' },
    { name: 'password', value: '<pw>', required: true, credential: 'password' },
    { name: 'systemType', value: '<type>', setting: 'system_type' },
    { name: 'sourceAddr', value: '<default sender>', setting: 'source_addr' },
    { name: 'window', value: '<1-100, default 10>', setting: 'window' },
  ],
  usage: {
    lines: [
      ['workspace', 'slug', 'type', 'host', 'port'],
      ['systemId', 'password', 'systemType'],
      ['sourceAddr', 'window'],
      ['name', 'requiresSenderId', 'messagesPerSecond <n, default 50>'],
    ],
    note: '(SMPP 3.4 transceiver; the password is stored encrypted, never shown)',
  },
  configure(input) {
    const host = requiredText(input, 'host');
    if (!HOST_NAME.test(host) && !IP_ADDRESS.test(host))
      throw refuse`${field('host')} "${host}" must be a host name or an IP address`;
    const port = wholeNumberText(input, 'port', 1, 65535);
    if (port === undefined) throw refuse`${field('port')} is required`;
    const systemId = smppString(input, 'systemId', 15);
    if (systemId === undefined) throw refuse`${field('systemId')} is required`;
    // Taken as given: spaces are refused, not trimmed away.
    const password = input.password;
    if (password === undefined || password === '') throw refuse`${field('password')} is required`;
    if (!/^[\x21-\x7e]{1,8}$/.test(password))
      throw refuse`${field('password')} must be 1 to 8 printable ASCII characters without spaces (SMPP 3.4)`;
    const systemType = smppString(input, 'systemType', 12);
    const sourceAddr = optionalText(input, 'sourceAddr');
    if (
      sourceAddr !== undefined &&
      !E164_ADDRESS.test(sourceAddr) &&
      !ALPHANUMERIC_SENDER.test(sourceAddr) &&
      !/^\d{3,8}$/.test(sourceAddr)
    )
      throw refuse`${field('sourceAddr')} "${sourceAddr}" must be an E.164 number, a short code or an alphanumeric sender id (up to 11 characters)`;
    const window = wholeNumberText(input, 'window', 1, 100);
    const settings: Record<string, string> = { host: host.replace(/^\[|\]$/g, ''), port };
    if (systemType) settings.system_type = systemType;
    if (sourceAddr) settings.source_addr = sourceAddr;
    if (window) settings.window = window;
    return { settings, credentials: { system_id: systemId, password } };
  },
  exclusiveAccount({ settings, credentials }) {
    const systemId = smppCredentials.safeParse(credentials).data?.system_id;
    return !settings.host || systemId === undefined
      ? undefined
      : { host: settings.host, port: settings.port, systemId };
  },
  // The api never binds: it reads no SMPP credentials to answer a webhook.
  webhookParser: () => ({ parseReceipt: () => SMPP_WEBHOOK_ANSWER }),
  create(record, { secret, smppSessions }) {
    return new SmppProvider(smppConfigOf(record, secret), smppSessions, {
      requiresSenderId: record.requiresSenderId,
      countries: declaredCountries(record),
      messagesPerSecond: record.messagesPerSecond,
    });
  },
  testConnection: (record, { secret }) => testSmppBind(smppConfigOf(record, secret)),
};

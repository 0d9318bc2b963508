/**
 * Each provider type's settings and credentials, checked from the create input and shaped as
 * stored: settings as strings in providers.settings, credentials as plaintext to be encrypted.
 * Secrets (a Twilio auth token, an SMPP password) are never echoed, not even in an error.
 */
import { isSupportedCountry } from 'libphonenumber-js/max';
import { z } from 'zod';
import { fieldsOf, invalid, optionalText, requiredText } from './input.js';

export const CREATABLE_TYPES = ['simulator', 'twilio', 'smpp'] as const;
export type CreatableType = (typeof CREATABLE_TYPES)[number];

/** The type-specific fields of a provider's create input. */
export interface ProviderSettingsInput {
  baseUrl?: string;
  countries?: string[];
  /** Twilio */
  accountSid?: string;
  authToken?: string;
  from?: string;
  messagingServiceSid?: string;
  /** SMPP; the port and window as text, as they are stored. */
  host?: string;
  port?: string;
  systemId?: string;
  password?: string;
  systemType?: string;
  sourceAddr?: string;
  window?: string;
}

export interface ProviderConfig {
  settings: Record<string, string>;
  /** Plaintext credentials: encrypted before they reach the database. */
  credentials: Record<string, string> | null;
}

const field = fieldsOf<ProviderSettingsInput & { type: string }>();

/** The fields only one type takes; giving one to another type is refused, not ignored. */
const OWN_FIELDS = {
  twilio: ['accountSid', 'authToken', 'from', 'messagingServiceSid'],
  smpp: ['host', 'port', 'systemId', 'password', 'systemType', 'sourceAddr', 'window'],
  simulator: [],
} as const satisfies Record<CreatableType, readonly (keyof ProviderSettingsInput)[]>;

const E164 = /^\+[1-9]\d{1,14}$/;
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const IP_ADDRESS = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9A-Fa-f:]+\]?)$/;
/** Alphanumeric sender id: up to 11 letters, digits or spaces, at least one letter. */
const ALPHANUMERIC_SENDER = /^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/;

function httpUrl(name: 'baseUrl', value: string): string {
  if (!z.url({ protocol: /^https?$/ }).safeParse(value).success)
    throw invalid`${field(name)} "${value}" is not an http(s) URL`;
  return value;
}

function refuseFieldsOfOtherTypes(input: ProviderSettingsInput, type: CreatableType) {
  for (const [owner, names] of Object.entries(OWN_FIELDS)) {
    if (owner === type) continue;
    const given = names.find((name) => input[name] !== undefined);
    if (given) throw invalid`${field(given)} applies only to ${field('type')} ${owner}`;
  }
}

function simulatorConfig(input: ProviderSettingsInput): ProviderConfig {
  return {
    settings: { base_url: httpUrl('baseUrl', requiredText(input.baseUrl, field('baseUrl'))) },
    credentials: null,
  };
}

function twilioConfig(input: ProviderSettingsInput): ProviderConfig {
  const accountSid = requiredText(input.accountSid, field('accountSid'));
  if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid))
    throw invalid`${field('accountSid')} must be "AC" followed by 32 hexadecimal digits`;
  const authToken = requiredText(input.authToken, field('authToken'));
  if (!/^\S{8,}$/.test(authToken))
    throw invalid`${field('authToken')} must be at least 8 characters without spaces`;
  const from = optionalText(input.from);
  const messagingServiceSid = optionalText(input.messagingServiceSid);
  if (!from && !messagingServiceSid)
    throw invalid`Give ${field('from')} or ${field('messagingServiceSid')} (Twilio needs a sender)`;
  if (from && !E164.test(from) && !ALPHANUMERIC_SENDER.test(from))
    throw invalid`${field('from')} "${from}" must be an E.164 number or an alphanumeric sender id (up to 11 characters)`;
  if (messagingServiceSid && !/^MG[0-9a-fA-F]{32}$/.test(messagingServiceSid))
    throw invalid`${field('messagingServiceSid')} must be "MG" followed by 32 hexadecimal digits`;
  const baseUrl = optionalText(input.baseUrl);
  const settings: Record<string, string> = {};
  if (baseUrl) settings.base_url = httpUrl('baseUrl', baseUrl);
  if (from) settings.from = from;
  if (messagingServiceSid) settings.messaging_service_sid = messagingServiceSid;
  return { settings, credentials: { account_sid: accountSid, auth_token: authToken } };
}

/** Printable ASCII of SMPP 3.4's C-octet strings, which hold `max` characters before the NUL. */
function smppString(
  input: ProviderSettingsInput,
  name: 'systemId' | 'systemType',
  max: number,
): string | undefined {
  const value = optionalText(input[name]);
  if (value !== undefined && !new RegExp(`^[\\x21-\\x7e]{1,${max}}$`).test(value))
    throw invalid`${field(name)} must be 1 to ${max} printable ASCII characters without spaces (SMPP 3.4)`;
  return value;
}

function wholeNumberText(
  input: ProviderSettingsInput,
  name: 'port' | 'window',
  min: number,
  max: number,
): string | undefined {
  const value = optionalText(input[name]);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw invalid`${field(name)} must be a whole number from ${min} to ${max}`;
  return String(Number(value));
}

function smppConfig(input: ProviderSettingsInput): ProviderConfig {
  const host = requiredText(input.host, field('host'));
  if (!HOST_NAME.test(host) && !IP_ADDRESS.test(host))
    throw invalid`${field('host')} "${host}" must be a host name or an IP address`;
  const port = wholeNumberText(input, 'port', 1, 65535);
  if (port === undefined) throw invalid`${field('port')} is required`;
  const systemId = smppString(input, 'systemId', 15);
  if (systemId === undefined) throw invalid`${field('systemId')} is required`;
  // Taken as given: spaces are refused, not trimmed away.
  const password = input.password;
  if (password === undefined || password === '') throw invalid`${field('password')} is required`;
  if (!/^[\x21-\x7e]{1,8}$/.test(password))
    throw invalid`${field('password')} must be 1 to 8 printable ASCII characters without spaces (SMPP 3.4)`;
  const systemType = smppString(input, 'systemType', 12);
  const sourceAddr = optionalText(input.sourceAddr);
  if (
    sourceAddr !== undefined &&
    !E164.test(sourceAddr) &&
    !ALPHANUMERIC_SENDER.test(sourceAddr) &&
    !/^\d{3,8}$/.test(sourceAddr)
  )
    throw invalid`${field('sourceAddr')} "${sourceAddr}" must be an E.164 number, a short code or an alphanumeric sender id (up to 11 characters)`;
  const window = wholeNumberText(input, 'window', 1, 100);
  const settings: Record<string, string> = { host: host.replace(/^\[|\]$/g, ''), port };
  if (systemType) settings.system_type = systemType;
  if (sourceAddr) settings.source_addr = sourceAddr;
  if (window) settings.window = window;
  return { settings, credentials: { system_id: systemId, password } };
}

/** The destinations the provider serves, as stored (`AU,NZ`); none given: every country. */
function countriesSetting(countries: string[] | undefined): string | undefined {
  if (countries === undefined) return undefined;
  const codes = countries.map((code) => code.trim().toUpperCase());
  const unknown = codes.find((code) => !isSupportedCountry(code));
  if (unknown !== undefined)
    throw invalid`${field('countries')}: "${unknown}" is not an ISO 3166 alpha-2 country code`;
  return [...new Set(codes)].join(',');
}

/** The settings and credentials of a provider of `type`, checked in the order they are read. */
export function providerConfig(input: ProviderSettingsInput, type: CreatableType): ProviderConfig {
  refuseFieldsOfOtherTypes(input, type);
  const config =
    type === 'twilio'
      ? twilioConfig(input)
      : type === 'smpp'
        ? smppConfig(input)
        : simulatorConfig(input);
  const countries = countriesSetting(input.countries);
  if (countries) config.settings.countries = countries;
  return config;
}

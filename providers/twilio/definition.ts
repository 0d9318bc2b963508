/** Twilio as a provider type: an account SID and auth token (encrypted), a sender or messaging service. */
import { E164_ADDRESS } from '../../domain/phone.js';
import { declaredCountries, refuse } from '../../domain/provider-definition.js';
import {
  ALPHANUMERIC_SENDER,
  field,
  fieldRefusals,
  httpUrl,
  optionalText,
  requiredText,
} from '../field-rules.js';
import { storedCredentials } from '../stored-credentials.js';
import type { VendorDefinition } from '../types.js';
import { TwilioProvider, twilioCredentials, twilioSettings } from './adapter.js';
import { testTwilioAccount } from './connection-test.js';

export const twilio: VendorDefinition = {
  type: 'twilio',
  settings: twilioSettings,
  credentials: twilioCredentials,
  fields: [
    { name: 'accountSid', value: '<AC…>', required: true, credential: 'account_sid' },
    { name: 'authToken', value: '<token>', required: true, credential: 'auth_token' },
    { name: 'from', value: '<E.164 or alphanumeric>', setting: 'from' },
    { name: 'messagingServiceSid', value: '<MG…>', setting: 'messaging_service_sid' },
    { name: 'baseUrl', value: '<url>', shared: true, setting: 'base_url' },
  ],
  usage: {
    lines: [
      ['workspace', 'slug', 'type', 'accountSid'],
      ['authToken', 'from'],
      ['messagingServiceSid', 'baseUrl', 'name'],
      ['requiresSenderId', 'messagesPerSecond', 'countries'],
    ],
    note: '(the token is stored encrypted, never shown)',
  },
  configure(input) {
    const refusals = fieldRefusals();
    const accountSid = refusals.check(() => {
      const accountSid = requiredText(input, 'accountSid');
      if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid))
        throw refuse`${field('accountSid')} must be "AC" followed by 32 hexadecimal digits`;
      return accountSid;
    });
    const authToken = refusals.check(() => {
      const authToken = requiredText(input, 'authToken');
      if (!/^\S{8,}$/.test(authToken))
        throw refuse`${field('authToken')} must be at least 8 characters without spaces`;
      return authToken;
    });
    const from = optionalText(input, 'from');
    const messagingServiceSid = optionalText(input, 'messagingServiceSid');
    refusals.check(() => {
      if (!from && !messagingServiceSid)
        throw refuse`Give ${field('from')} or ${field('messagingServiceSid')} (Twilio needs a sender)`;
      if (from && !E164_ADDRESS.test(from) && !ALPHANUMERIC_SENDER.test(from))
        throw refuse`${field('from')} "${from}" must be an E.164 number or an alphanumeric sender id (up to 11 characters)`;
    });
    refusals.check(() => {
      if (messagingServiceSid && !/^MG[0-9a-fA-F]{32}$/.test(messagingServiceSid))
        throw refuse`${field('messagingServiceSid')} must be "MG" followed by 32 hexadecimal digits`;
    });
    const baseUrl = optionalText(input, 'baseUrl');
    const checkedBaseUrl = baseUrl && refusals.check(() => httpUrl('baseUrl', baseUrl));
    refusals.throwAny();
    const settings: Record<string, string> = {};
    if (checkedBaseUrl) settings.base_url = checkedBaseUrl;
    if (from) settings.from = from;
    if (messagingServiceSid) settings.messaging_service_sid = messagingServiceSid;
    return {
      settings,
      credentials: { account_sid: accountSid as string, auth_token: authToken as string },
    };
  },
  create(record, { secret }) {
    return new TwilioProvider(record.slug, {
      ...twilioCredentials.parse(storedCredentials(record, secret)),
      ...twilioSettings.parse(record.settings),
      countries: declaredCountries(record),
      requiresSenderId: record.requiresSenderId,
      messagesPerSecond: record.messagesPerSecond,
    });
  },
  testConnection: (record, { secret }) =>
    testTwilioAccount({
      ...twilioCredentials.parse(storedCredentials(record, secret)),
      ...twilioSettings.parse(record.settings),
    }),
};

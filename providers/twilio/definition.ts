/** Twilio as a provider type: an account SID and auth token (encrypted), a sender or messaging service. */
import { declaredCountries, refuse } from '../../domain/provider-definition.js';
import {
  ALPHANUMERIC_SENDER,
  E164_SENDER,
  field,
  httpUrl,
  optionalText,
  requiredText,
} from '../field-rules.js';
import { storedCredentials } from '../stored-credentials.js';
import type { VendorDefinition } from '../types.js';
import { TwilioProvider, twilioCredentials, twilioSettings } from './adapter.js';

export const twilio: VendorDefinition = {
  type: 'twilio',
  settings: twilioSettings,
  credentials: twilioCredentials,
  fields: [
    { name: 'accountSid', value: '<AC…>', required: true },
    { name: 'authToken', value: '<token>', required: true },
    { name: 'from', value: '<E.164 or alphanumeric>' },
    { name: 'messagingServiceSid', value: '<MG…>' },
    { name: 'baseUrl', value: '<url>', shared: true },
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
    const accountSid = requiredText(input, 'accountSid');
    if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid))
      throw refuse`${field('accountSid')} must be "AC" followed by 32 hexadecimal digits`;
    const authToken = requiredText(input, 'authToken');
    if (!/^\S{8,}$/.test(authToken))
      throw refuse`${field('authToken')} must be at least 8 characters without spaces`;
    const from = optionalText(input, 'from');
    const messagingServiceSid = optionalText(input, 'messagingServiceSid');
    if (!from && !messagingServiceSid)
      throw refuse`Give ${field('from')} or ${field('messagingServiceSid')} (Twilio needs a sender)`;
    if (from && !E164_SENDER.test(from) && !ALPHANUMERIC_SENDER.test(from))
      throw refuse`${field('from')} "${from}" must be an E.164 number or an alphanumeric sender id (up to 11 characters)`;
    if (messagingServiceSid && !/^MG[0-9a-fA-F]{32}$/.test(messagingServiceSid))
      throw refuse`${field('messagingServiceSid')} must be "MG" followed by 32 hexadecimal digits`;
    const baseUrl = optionalText(input, 'baseUrl');
    const settings: Record<string, string> = {};
    if (baseUrl) settings.base_url = httpUrl('baseUrl', baseUrl);
    if (from) settings.from = from;
    if (messagingServiceSid) settings.messaging_service_sid = messagingServiceSid;
    return { settings, credentials: { account_sid: accountSid, auth_token: authToken } };
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
};

/**
 * Does a Twilio provider's account answer? An authenticated fetch of the Account resource
 * (https://www.twilio.com/docs/iam/api/account#fetch-an-account-resource) at the provider's base
 * URL: Twilio answers 200 for an account SID and auth token that belong together, 401 otherwise.
 */
import type { ConnectionTest } from '../../domain/provider-definition.js';
import { TWILIO_API_URL, type TwilioCredentials, type TwilioSettings } from './adapter.js';

const TEST_TIMEOUT_MS = 10_000;

export async function testTwilioAccount(
  options: TwilioCredentials & TwilioSettings,
): Promise<ConnectionTest> {
  const { account_sid: accountSid, auth_token: authToken } = options;
  const base = options.base_url ?? TWILIO_API_URL;
  const url = new URL(`/2010-04-01/Accounts/${accountSid}.json`, base);
  let response: Response;
  try {
    response = await fetch(url, {
      headers: {
        authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
        accept: 'application/json',
      },
      signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return {
      ok: false,
      reason: `${base} could not be reached (${cause ?? (error as Error).name})`,
    };
  }
  let body: { status?: string; friendly_name?: string; code?: number; message?: string } = {};
  try {
    body = (await response.json()) as typeof body;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  if (response.status === 200)
    return {
      ok: true,
      detail: `Twilio account ${accountSid} answered${body.status ? ` (status ${body.status})` : ''}.`,
    };
  if (response.status === 401)
    return { ok: false, reason: 'Twilio refused the account SID and auth token (401).' };
  const said = body.code ? ` ${body.code}${body.message ? `: ${body.message}` : ''}` : '';
  return { ok: false, reason: `Twilio answered HTTP ${response.status}${said}.` };
}

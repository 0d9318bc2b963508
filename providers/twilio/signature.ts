import { createHmac, timingSafeEqual } from 'node:crypto';

/** Form fields as parsed from `application/x-www-form-urlencoded`. */
export type FormParams = Record<string, string | string[] | undefined>;

/**
 * `X-Twilio-Signature` as Twilio documents it (https://www.twilio.com/docs/usage/security):
 * the full URL Twilio requested, query string included, followed by every POST parameter sorted
 * by name, each name immediately followed by its value (a repeated name once per value, values
 * sorted); HMAC-SHA1 of that string keyed with the account's AuthToken, base64-encoded.
 */
export function twilioSignature(authToken: string, url: string, params: FormParams): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name];
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? [...value].sort() : [value]) data += name + item;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/**
 * The URL as given, and as Twilio may have written it with or without the scheme's default port
 * (its own helper libraries accept both forms).
 */
function urlVariants(url: string): string[] {
  const variants = [url];
  try {
    const parsed = new URL(url);
    const port = DEFAULT_PORTS[parsed.protocol];
    const pathStart = url.indexOf('/', parsed.protocol.length + 2);
    const rest = pathStart === -1 ? parsed.pathname + parsed.search : url.slice(pathStart);
    const base = `${parsed.protocol}//${parsed.username ? `${parsed.username}:${parsed.password}@` : ''}`;
    if (port && parsed.port === '') variants.push(`${base}${parsed.hostname}:${port}${rest}`);
    variants.push(`${base}${parsed.host}${rest}`);
  } catch {
    // Not a URL: only the exact string can match.
  }
  return [...new Set(variants)];
}

/** Constant-time check of an `X-Twilio-Signature` header. */
export function verifyTwilioSignature(
  authToken: string,
  header: string | undefined,
  url: string,
  params: FormParams,
): boolean {
  if (!header) return false;
  const given = Buffer.from(header, 'utf8');
  let valid = false;
  for (const candidate of urlVariants(url)) {
    const expected = Buffer.from(twilioSignature(authToken, candidate, params), 'utf8');
    if (expected.length === given.length && timingSafeEqual(expected, given)) valid = true;
  }
  return valid;
}

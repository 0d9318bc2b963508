/** Opt-out rules shared by the api, the activities and the provider sessions. */

/** The placeholder a marketing message may carry once; it becomes the recipient's link. */
export const OPT_OUT_PLACEHOLDER = '{opt_out_url}';

/** Length of an opt-out link token (base62): 62^10 ≈ 8·10^17, unguessable for this purpose. */
export const OPT_OUT_TOKEN_LENGTH = 10;

/** The link that replaces `{opt_out_url}`: `{PUBLIC_URL}/o/<token>`. */
export function optOutUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/o/${token}`;
}

/**
 * The text as a recipient receives it. Validation renders with a token of the real length, so
 * the link counts toward the length and segments exactly as it will be sent.
 */
export function renderOptOutLink(
  body: string,
  publicUrl: string,
  token = 'x'.repeat(OPT_OUT_TOKEN_LENGTH),
) {
  return body.replace(OPT_OUT_PLACEHOLDER, optOutUrl(publicUrl, token));
}

/** Carrier-standard reply keywords (CTIA; the set Twilio honours), matched on the whole reply. */
const STOP_WORDS = new Set([
  'STOP',
  'STOPALL',
  'UNSUBSCRIBE',
  'CANCEL',
  'END',
  'QUIT',
  'OPTOUT',
  'REVOKE',
]);
const START_WORDS = new Set(['START', 'UNSTOP', 'YES']);
/** Answered with the workspace's help text, when it has one (docs/providers.md "Replies"). */
const HELP_WORDS = new Set(['HELP', 'INFO']);

/** What a reply asks for: `stop`, `start`, `help`, or nothing (any other text). */
export function replyKeyword(body: string): 'stop' | 'start' | 'help' | null {
  const word = body
    .trim()
    .replace(/[\s.!]+$/u, '')
    .toUpperCase();
  if (STOP_WORDS.has(word)) return 'stop';
  if (START_WORDS.has(word)) return 'start';
  if (HELP_WORDS.has(word)) return 'help';
  return null;
}

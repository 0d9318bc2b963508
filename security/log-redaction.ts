/**
 * What a log line must not hold (issue 24 item 4): whoever reads the logs must not be able to
 * accept an invitation, opt a recipient out or call the API. Applied to every line the api and
 * the worker write, whatever wrote it (a request's URL, an error's message):
 *
 * - the token of an invitation link, `/console/invitations/<token>`;
 * - the token of an opt-out link, `/o/<token>`;
 * - every query value, its name kept (`?from=[redacted]`): a query may carry anything, and the
 *   path and the names say what a request was;
 * - anything shaped like an API key (`hld_<prefix>_<secret>`: the public prefix is kept) or an
 *   invitation token (`hli_<secret>`), wherever it appears.
 *
 * Request bodies and headers (passwords, OTP codes, `Authorization`) are never logged.
 */

export const REDACTED = '[redacted]';

/** Characters that end a path segment or a query value, in a URL or a JSON-encoded one. */
const END = `/?#&\\s"'\\\\<>`;

const RULES: [RegExp, string][] = [
  [new RegExp(`(/console/invitations/)[^${END}]+`, 'g'), `$1${REDACTED}`],
  [new RegExp(`(/o/)[^${END}]+`, 'g'), `$1${REDACTED}`],
  [new RegExp(`([?&][^=${END}]+=)[^${END}]+`, 'g'), `$1${REDACTED}`],
  [/\b(hld_[a-z0-9]{8}_)[A-Za-z0-9_-]+/g, `$1${REDACTED}`],
  [/\bhli_[A-Za-z0-9_-]+/g, `hli_${REDACTED}`],
];

/** `text` with every secret above replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  let redacted = text;
  for (const [pattern, replacement] of RULES) redacted = redacted.replace(pattern, replacement);
  return redacted;
}

/**
 * Callback allowlist entries that end in `*` (MCP_REDIRECT_URIS): an HTTPS path prefix under
 * which a hosted client has one callback per connector, e.g. ChatGPT's
 * `https://chatgpt.com/connector/oauth/<id>`. Used by config (to refuse a malformed entry at
 * start-up) and by the authorization server (to match a callback against it).
 */

const EXAMPLE = 'as in https://chatgpt.com/connector/oauth/*';

/** Why an allowlist entry is no valid pattern, or undefined (also for entries without `*`). */
export function callbackPatternProblem(entry: string): string | undefined {
  if (!entry.includes('*')) return undefined;
  if (!entry.startsWith('https://')) {
    return `${entry}: a * is allowed only on an https:// callback, ${EXAMPLE}`;
  }
  const prefix = entry.slice(0, -1);
  const pathOnly = !/[?#]/.test(prefix);
  if (!entry.endsWith('/*') || prefix.includes('*') || !pathOnly || !isPathPrefix(prefix)) {
    return `${entry}: a * may only end the path, after a /, ${EXAMPLE}`;
  }
  return undefined;
}

/** The prefix is an https URL whose path ends where it was written (no host wildcard). */
function isPathPrefix(prefix: string): boolean {
  try {
    return new URL(prefix).href === prefix;
  } catch {
    return false;
  }
}

/**
 * Whether `uri` lies under a valid pattern's prefix. The callback must already be in the form a
 * browser is sent to (WHATWG URL serialisation): no dot segments, backslashes, default port or
 * uppercase host that would resolve elsewhere than they read; and no encoded slash or backslash,
 * which a server behind the prefix may decode into a path of its own.
 */
export function matchesCallbackPattern(uri: string, pattern: string): boolean {
  if (callbackPatternProblem(pattern) !== undefined || !pattern.endsWith('/*')) return false;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.href !== uri || /%2f|%5c/i.test(uri) || uri.includes('#')) return false;
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.hash !== '') {
    return false;
  }
  return uri.startsWith(pattern.slice(0, -1));
}

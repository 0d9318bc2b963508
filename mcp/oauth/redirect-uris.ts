/**
 * Callback rules of docs/spec.md §5.3. HTTPS callbacks match exactly, or lie under an allowlisted prefix
 * ending in `*`; HTTP callbacks are allowed only on loopback hosts (RFC 8252 §7.3), where a
 * native client picks its port at run time and `localhost`, `127.0.0.1` and `[::1]` are one host.
 */

import { matchesCallbackPattern } from '../../domain/callback-pattern.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface RedirectPolicy {
  allowDynamicClients: boolean;
  /** MCP_REDIRECT_URIS: when non-empty, callbacks must be on it (or under one of its patterns). */
  allowlist: readonly string[];
}

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** An HTTP callback on a loopback host: a native client on the user's own machine. */
export function isLoopbackCallback(uri: string): boolean {
  const url = parse(uri);
  return url !== undefined && isLoopbackHttp(url);
}

/**
 * Same callback, except that loopback HTTP callbacks may differ in port and loopback name (a
 * client registers `127.0.0.1` and opens its listener as `localhost`, or the reverse).
 */
export function sameCallback(requested: string, registered: string): boolean {
  if (requested === registered) return true;
  const a = parse(requested);
  const b = parse(registered);
  if (!a || !b || !isLoopbackHttp(a) || !isLoopbackHttp(b)) return false;
  return (
    a.pathname === b.pathname &&
    a.search === b.search &&
    a.username === '' &&
    a.password === '' &&
    !requested.includes('#')
  );
}

/** Whether the operator's allowlist admits the callback (policy.allowlist non-empty). */
export function isAllowlisted(uri: string, policy: RedirectPolicy): boolean {
  return policy.allowlist.some(
    (allowed) => sameCallback(uri, allowed) || matchesCallbackPattern(uri, allowed),
  );
}

export const notAllowlisted = (uri: string) => `${uri} is not on this server's callback allowlist.`;

/** What is wrong with the callback itself, whatever the server's policy. */
export function malformedRedirectUri(uri: string): string | undefined {
  const url = parse(uri);
  if (!url) return `${uri} is not an absolute URL.`;
  if (url.hash !== '') return `${uri} must not contain a fragment.`;
  if (url.username !== '' || url.password !== '') return `${uri} must not contain credentials.`;
  return undefined;
}

/** Why a callback may not be registered or used here, or undefined when it may. */
export function redirectUriProblem(uri: string, policy: RedirectPolicy): string | undefined {
  const malformed = malformedRedirectUri(uri);
  if (malformed) return malformed;
  if (policy.allowlist.length > 0) {
    return isAllowlisted(uri, policy) ? undefined : notAllowlisted(uri);
  }
  if (!policy.allowDynamicClients) {
    return 'This server accepts no callbacks: dynamic clients are off and the callback allowlist is empty.';
  }
  const url = parse(uri) as URL;
  if (url.protocol === 'https:' || isLoopbackHttp(url)) return undefined;
  if (url.protocol === 'http:') return `${uri} must use HTTPS unless it is a loopback address.`;
  // Private-use schemes of native apps (RFC 8252 §7.1), never ones a browser would run.
  if (['javascript:', 'data:', 'file:', 'blob:', 'vbscript:'].includes(url.protocol)) {
    return `${uri} uses a scheme that cannot receive an authorization code.`;
  }
  return undefined;
}

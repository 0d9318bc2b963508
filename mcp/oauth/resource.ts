/**
 * RFC 8707 resource indicators, compared as RFC 3986 §6.2.2–6.2.3 normalise them: the scheme and
 * host in lower case, no default port (443 for https, 80 for http), dot segments resolved, and
 * one trailing slash dropped. Clients spell the resource as they found it (an uppercase host
 * typed by a user, a trailing slash added by a URL library); the grant stores this one spelling,
 * the one `/mcp`'s guard compares with.
 */
export function canonicalResource(uri: string): string | undefined {
  // RFC 8707 §2: an absolute URI without a fragment (an empty `#` is still one).
  if (uri.includes('#')) return undefined;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  const path = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
  return `${url.origin}${path}${url.search}`;
}

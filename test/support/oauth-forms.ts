/** The sign-in and consent forms driven over plain HTTP; shared by tests and `bench:mcp`. */
import { createHash, randomBytes } from 'node:crypto';

function hiddenRequestId(html: string): string {
  const id = /name="request" value="([^"]+)"/.exec(html)?.[1];
  if (!id) throw new Error(`No authorization request in page: ${html.slice(0, 300)}`);
  return id;
}

async function postForm(url: string, fields: Record<string, string>, cookie?: string) {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams(fields),
  });
}

/**
 * Drives the sign-in and consent pages as a browser would, without one: follows the
 * authorization URL, signs in, picks `workspaceId` when asked, and decides. Returns the URL the
 * server sent the browser back to (the client's callback with code or error).
 */
export async function authorizeInForms(
  authorizationUrl: string,
  user: { email: string; password: string },
  options: { decision?: 'approve' | 'deny'; workspaceId?: number } = {},
): Promise<URL> {
  const start = await fetch(authorizationUrl, { redirect: 'manual' });
  if (start.status === 303) return new URL(start.headers.get('location') as string);
  if (start.status !== 200)
    throw new Error(`authorize answered ${start.status}: ${await start.text()}`);
  const base = new URL('.', start.url.replace(/\?.*$/, ''));
  const requestId = hiddenRequestId(await start.text());
  const signedIn = await postForm(new URL('sign-in', base).toString(), {
    request: requestId,
    email: user.email,
    password: user.password,
  });
  const html = await signedIn.text();
  if (signedIn.status !== 200) throw new Error(`sign-in answered ${signedIn.status}: ${html}`);
  const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
  // Signing in stores the request under an id of its own, carried by the pages that follow.
  const storedId = hiddenRequestId(html);
  if (html.includes('action="workspace"')) {
    const chosen = await postForm(
      new URL('workspace', base).toString(),
      { request: storedId, workspace: String(options.workspaceId ?? '') },
      cookie,
    );
    if (chosen.status !== 200) throw new Error(`workspace answered ${chosen.status}`);
  }
  const decided = await postForm(
    new URL('consent', base).toString(),
    { request: storedId, decision: options.decision ?? 'approve' },
    cookie,
  );
  if (decided.status !== 303) {
    throw new Error(`consent answered ${decided.status}: ${await decided.text()}`);
  }
  return new URL(decided.headers.get('location') as string);
}

export interface ConnectedClient {
  clientId: string;
  accessToken: string;
  refreshToken: string;
}

/**
 * The whole flow a public client runs: registration, PKCE S256, the forms, the code exchange.
 * The callback is never served: the code is read from the redirect the server answers with.
 */
export async function connectWithForms(
  baseUrl: string,
  user: { email: string; password: string },
): Promise<ConnectedClient> {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const registered = await fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Forms client', redirect_uris: [redirectUri] }),
  });
  if (registered.status !== 201) throw new Error(`register answered ${registered.status}`);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = new URL(`${baseUrl}/oauth/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'mcp:use',
    resource: `${baseUrl}/mcp`,
  }).toString();
  const callback = await authorizeInForms(authorize.toString(), user);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`No code in ${callback}`);
  const exchanged = await postForm(`${baseUrl}/oauth/token`, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
    client_id: clientId,
  });
  const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
  if (exchanged.status !== 200) throw new Error(`token answered ${exchanged.status}`);
  return { clientId, accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
}

import { randomBytes } from 'node:crypto';
import { findSignInWorkspaces } from '../../db/member-access.js';
import { findClient } from '../../db/oauth-clients.js';
import {
  approveAuthorization,
  bindAuthorization,
  chooseWorkspace,
  deleteAuthorization,
  findAuthorization,
  type PendingAuthorization,
} from '../../db/oauth-grants.js';
import { findUserByEmail } from '../../db/users.js';
import { verifyPassword } from '../../security/password.js';
import { keyedHash, matchesKeyedHash } from '../../security/tokens.js';
import { callbackUrl } from './authorize.js';
import { LIFETIMES, type OAuthDeps } from './deps.js';
import { consentPage, messagePage, signInPage, workspacePage } from './pages.js';

/** What a step of the sign-in and consent pages answers: a page, or a redirect. */
export type Interaction =
  | { kind: 'page'; status: number; html: string; setBrowser?: string }
  | { kind: 'redirect'; location: string };

/** A password check against this hash when the email is unknown, so timing does not tell. */
const UNKNOWN_USER_HASH =
  '$scrypt$ln=15,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

const expired = (): Interaction => ({
  kind: 'page',
  status: 400,
  html: messagePage(
    'Request expired',
    'This authorization request has expired or is unknown. Start again from your client.',
  ),
});

function sameBrowser(deps: OAuthDeps, authorization: PendingAuthorization, cookie?: string) {
  if (!cookie || !authorization.browserHash) return false;
  return matchesKeyedHash(deps.secret, 'oauth-browser-hash', cookie, authorization.browserHash);
}

async function clientName(deps: OAuthDeps, clientId: string): Promise<string> {
  return (await findClient(deps.sql, clientId))?.name ?? 'Unknown client';
}

export async function showSignIn(deps: OAuthDeps, requestId: string): Promise<Interaction> {
  const authorization = await findAuthorization(deps.sql, requestId);
  if (!authorization) return expired();
  const name = await clientName(deps, authorization.clientId);
  return { kind: 'page', status: 200, html: signInPage({ requestId, clientName: name }) };
}

export async function signIn(
  deps: OAuthDeps,
  form: { request: string; email: string; password: string },
): Promise<Interaction> {
  const authorization = await findAuthorization(deps.sql, form.request);
  if (!authorization) return expired();
  const user = await findUserByEmail(deps.sql, form.email);
  const valid = await verifyPassword(form.password, user?.passwordHash ?? UNKNOWN_USER_HASH);
  const name = await clientName(deps, authorization.clientId);
  if (!user || !valid) {
    const error = 'The email or password is incorrect.';
    return {
      kind: 'page',
      status: 401,
      html: signInPage({ requestId: form.request, clientName: name, error }),
    };
  }
  const workspaces = await findSignInWorkspaces(deps.sql, user.id);
  if (workspaces.length === 0) {
    return {
      kind: 'page',
      status: 403,
      html: messagePage('No workspace', 'This account is not an active member of any workspace.'),
    };
  }
  // The consent step must come from the browser that signed in, not from whoever knows the id.
  const browser = randomBytes(32).toString('base64url');
  await bindAuthorization(deps.sql, authorization.id, {
    userId: user.id,
    workspaceId: workspaces.length === 1 ? (workspaces[0]?.id ?? null) : null,
    browserHash: keyedHash(deps.secret, 'oauth-browser-hash', browser),
  });
  return {
    kind: 'page',
    status: 200,
    setBrowser: browser,
    html:
      workspaces.length === 1
        ? await consentFor(
            deps,
            { ...authorization, workspaceId: workspaces[0]?.id ?? null },
            workspaces,
          )
        : workspacePage({ requestId: authorization.id, workspaces }),
  };
}

async function consentFor(
  deps: OAuthDeps,
  authorization: PendingAuthorization,
  workspaces?: { id: number; name: string }[],
): Promise<string> {
  const choices =
    workspaces ??
    (authorization.userId ? await findSignInWorkspaces(deps.sql, authorization.userId) : []);
  const workspace = choices.find((choice) => choice.id === authorization.workspaceId);
  return consentPage({
    requestId: authorization.id,
    clientName: await clientName(deps, authorization.clientId),
    workspaceName: workspace?.name ?? 'this workspace',
    redirectUri: authorization.redirectUri,
    grantsReporting: authorization.scope !== '',
  });
}

export async function pickWorkspace(
  deps: OAuthDeps,
  form: { request: string; workspace: string },
  cookie: string | undefined,
): Promise<Interaction> {
  const authorization = await findAuthorization(deps.sql, form.request);
  if (!authorization?.userId || !sameBrowser(deps, authorization, cookie)) {
    return expired();
  }
  const workspaces = await findSignInWorkspaces(deps.sql, authorization.userId);
  const chosen = workspaces.find((workspace) => String(workspace.id) === form.workspace);
  if (!chosen) {
    return {
      kind: 'page',
      status: 400,
      html: workspacePage({ requestId: authorization.id, workspaces }),
    };
  }
  await chooseWorkspace(deps.sql, authorization.id, chosen.id);
  return {
    kind: 'page',
    status: 200,
    html: await consentFor(deps, { ...authorization, workspaceId: chosen.id }, workspaces),
  };
}

export async function decide(
  deps: OAuthDeps,
  form: { request: string; decision: string },
  cookie: string | undefined,
): Promise<Interaction> {
  const authorization = await findAuthorization(deps.sql, form.request);
  if (
    !authorization ||
    authorization.userId === null ||
    authorization.workspaceId === null ||
    !sameBrowser(deps, authorization, cookie)
  ) {
    return expired();
  }
  if (form.decision !== 'approve') {
    await deleteAuthorization(deps.sql, authorization.id);
    return {
      kind: 'redirect',
      location: callbackUrl(deps, authorization.redirectUri, {
        error: 'access_denied',
        error_description: 'The user denied the request.',
        state: authorization.state,
      }),
    };
  }
  const code = `mcp_ac_${randomBytes(32).toString('base64url')}`;
  const approved = await approveAuthorization(
    deps.sql,
    { ...authorization, userId: authorization.userId, workspaceId: authorization.workspaceId },
    { hash: keyedHash(deps.secret, 'oauth-code-hash', code), lifetimeSeconds: LIFETIMES.code },
  );
  if (!approved) return expired();
  return {
    kind: 'redirect',
    location: callbackUrl(deps, authorization.redirectUri, { code, state: authorization.state }),
  };
}

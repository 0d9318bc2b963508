import { randomBytes } from 'node:crypto';
import { signInWithPassword } from '../../commands/team/sign-in.js';
import { checkTotpCode, secondFactorDue } from '../../commands/team/totp.js';
import { findSignInWorkspaces } from '../../db/member-access.js';
import { findClient } from '../../db/oauth-clients.js';
import { findConsentParties } from '../../db/oauth-consent.js';
import {
  approveAuthorization,
  chooseWorkspace,
  completeAuthorizationSecondFactor,
  deleteAuthorization,
  findAuthorization,
  insertAuthorization,
  type PendingAuthorization,
} from '../../db/oauth-grants.js';
import { UUID } from '../../domain/request-schema.js';
import { keyedHash, matchesKeyedHash } from '../../security/tokens.js';
import { callbackUrl } from './authorize.js';
import { LIFETIMES, type OAuthDeps } from './deps.js';
import {
  type ClientWebsite,
  codePage,
  consentPage,
  messagePage,
  signInPage,
  workspacePage,
} from './pages.js';
import { isLoopbackCallback } from './redirect-uris.js';
import { openRequest } from './sealed-request.js';

/** What a step of the sign-in and consent pages answers: a page, or a redirect. */
export type Interaction =
  | {
      kind: 'page';
      status: number;
      html: string;
      setBrowser?: string;
      headers?: Record<string, string>;
    }
  | { kind: 'redirect'; location: string };

/** Seconds a sign-in refused for want of hashing capacity is told to wait. */
const BUSY_RETRY_AFTER_SECONDS = 2;

type PageInteraction = Extract<Interaction, { kind: 'page' }>;

const page = (html: string): PageInteraction => ({ kind: 'page', status: 200, html });

const expired = (): PageInteraction => ({
  kind: 'page',
  status: 400,
  html: messagePage(
    'Request expired',
    'This authorization request has expired or is unknown. Start again from your client.',
  ),
});

/** A stored authorization request (after sign-in); an id that cannot be one finds nothing. */
async function findStored(deps: OAuthDeps, id: string) {
  return UUID.test(id) ? findAuthorization(deps.sql, id) : undefined;
}

function sameBrowser(deps: OAuthDeps, authorization: PendingAuthorization, cookie?: string) {
  if (!cookie || !authorization.browserHash) return false;
  return matchesKeyedHash(deps.secret, 'oauth-browser-hash', cookie, authorization.browserHash);
}

const minutes = (seconds: number) => {
  const count = Math.ceil(seconds / 60);
  return `${count} minute${count === 1 ? '' : 's'}`;
};

/**
 * POST /sign-in: the request sealed into the form at /authorize, then the password (throttled per
 * account and address). Only a signed-in user's request is stored, bound to the browser.
 */
export async function signIn(
  deps: OAuthDeps,
  form: { request: string; email: string; password: string },
  address: string,
): Promise<Interaction> {
  const request = openRequest(deps.secret, form.request);
  const client = request && (await findClient(deps.sql, request.clientId));
  if (!request || !client) return expired();
  const again = (status: number, error: string, headers?: Record<string, string>) => ({
    kind: 'page' as const,
    status,
    headers,
    html: signInPage({ requestId: form.request, clientName: client.name, error }),
  });
  const result = await signInWithPassword(deps, {
    email: form.email,
    password: form.password,
    address,
  });
  switch (result.outcome) {
    case 'throttled':
      return again(
        429,
        `Too many failed sign-in attempts. Try again in ${minutes(result.retryAfterSeconds)}.`,
        { 'retry-after': String(result.retryAfterSeconds) },
      );
    case 'busy':
      return again(503, 'Too many sign-ins are being checked right now. Try again in a moment.', {
        'retry-after': String(BUSY_RETRY_AFTER_SECONDS),
      });
    case 'incorrect':
      return again(401, 'The email or password is incorrect.');
  }
  const { user } = result;
  const workspaces = await findSignInWorkspaces(deps.sql, user.id);
  if (workspaces.length === 0) {
    return {
      kind: 'page',
      status: 403,
      html: messagePage('No workspace', 'This account is not an active member of any workspace.'),
    };
  }
  const factor = await secondFactorDue(deps, user.id);
  if (factor.required && !factor.enrolled) {
    return {
      kind: 'page',
      status: 403,
      html: messagePage(
        'Two-step verification required',
        'A workspace of yours requires two-step verification. Set it up in the Herald console (Profile), then connect again.',
      ),
    };
  }
  // The consent step must come from the browser that signed in, not from whoever knows the id.
  const browser = randomBytes(32).toString('base64url');
  const workspaceId = workspaces.length === 1 ? (workspaces[0]?.id ?? null) : null;
  const browserHash = keyedHash(deps.secret, 'oauth-browser-hash', browser);
  const authorization: PendingAuthorization = {
    ...request,
    id: await insertAuthorization(
      deps.sql,
      {
        ...request,
        userId: user.id,
        workspaceId,
        browserHash,
        secondFactorPending: factor.enrolled,
      },
      LIFETIMES.authorizationRequest,
    ),
    userId: user.id,
    workspaceId,
    browserHash,
  };
  // With a second factor, the code comes first (docs/spec.md §5.2 item 2: any required verification).
  if (factor.enrolled) {
    return {
      kind: 'page',
      status: 200,
      setBrowser: browser,
      html: codePage({ requestId: authorization.id }),
    };
  }
  const next =
    workspaceId !== null
      ? await consentFor(deps, { ...authorization, userId: user.id, workspaceId })
      : page(workspacePage({ requestId: authorization.id, workspaces }));
  return { ...next, setBrowser: browser };
}

/** The client's own website from its registration: shown only when it is an https address. */
function clientWebsite(metadata: Record<string, unknown>): ClientWebsite {
  const uri = metadata.client_uri;
  if (typeof uri !== 'string') return { kind: 'none' };
  try {
    return new URL(uri).protocol === 'https:' ? { kind: 'https', uri } : { kind: 'other' };
  } catch {
    return { kind: 'other' };
  }
}

/** The consent page of a request whose user and workspace are known. */
async function consentFor(
  deps: OAuthDeps,
  authorization: PendingAuthorization & { userId: number; workspaceId: number },
): Promise<PageInteraction> {
  const parties = await findConsentParties(deps.sql, authorization);
  if (!parties) return expired();
  return {
    kind: 'page',
    status: 200,
    html: consentPage({
      requestId: authorization.id,
      client: {
        name: parties.clientName,
        website: clientWebsite(parties.clientMetadata),
        registeredAt: parties.clientRegisteredAt,
      },
      workspace: { name: parties.workspaceName, slug: parties.workspaceSlug },
      userEmail: parties.userEmail,
      redirectUri: authorization.redirectUri,
      callbackIsLoopback: isLoopbackCallback(authorization.redirectUri),
      now: new Date(),
    }),
  };
}

export async function pickWorkspace(
  deps: OAuthDeps,
  form: { request: string; workspace: string },
  cookie: string | undefined,
): Promise<Interaction> {
  const authorization = await findStored(deps, form.request);
  if (
    !authorization?.userId ||
    authorization.secondFactorPending ||
    !sameBrowser(deps, authorization, cookie)
  ) {
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
  return consentFor(deps, {
    ...authorization,
    userId: authorization.userId,
    workspaceId: chosen.id,
  });
}

export async function decide(
  deps: OAuthDeps,
  form: { request: string; decision: string },
  cookie: string | undefined,
): Promise<Interaction> {
  const authorization = await findStored(deps, form.request);
  if (
    !authorization ||
    authorization.userId === null ||
    authorization.workspaceId === null ||
    authorization.secondFactorPending ||
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

/** POST /code: the TOTP code of the user who signed in with the password, from that browser. */
export async function verifyCode(
  deps: OAuthDeps,
  form: { request: string; code: string },
  cookie: string | undefined,
): Promise<Interaction> {
  const authorization = await findStored(deps, form.request);
  if (
    !authorization?.userId ||
    !authorization.secondFactorPending ||
    !sameBrowser(deps, authorization, cookie)
  ) {
    return expired();
  }
  const again = (status: number, error: string, headers?: Record<string, string>) => ({
    kind: 'page' as const,
    status,
    headers,
    html: codePage({ requestId: authorization.id, error }),
  });
  const result = await checkTotpCode(deps, authorization.userId, form.code);
  if (result.outcome === 'throttled') {
    return again(429, `Too many wrong codes. Try again in ${minutes(result.retryAfterSeconds)}.`, {
      'retry-after': String(result.retryAfterSeconds),
    });
  }
  if (result.outcome === 'incorrect') {
    return again(
      401,
      'That code is not right. Enter the current code from your authenticator app.',
    );
  }
  await completeAuthorizationSecondFactor(deps.sql, authorization.id);
  if (authorization.workspaceId !== null) {
    return consentFor(deps, {
      ...authorization,
      userId: authorization.userId,
      workspaceId: authorization.workspaceId,
    });
  }
  const workspaces = await findSignInWorkspaces(deps.sql, authorization.userId);
  return page(workspacePage({ requestId: authorization.id, workspaces }));
}

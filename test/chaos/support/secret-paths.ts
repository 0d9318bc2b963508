import { randomBytes } from 'node:crypto';
import { type Answer, call, recipients, type Tenant } from './api.js';
import { readInbox } from './audit.js';
import { rememberSecret } from './secrets.js';
import type { ChaosStack } from './stack.js';
import { waitUntil } from './timing.js';

/**
 * The requests that carry a secret in their URL or body, made once against the api so that the
 * run's logs are put to the test (issue 24 item 4): an invitation's page, a console sign-in with
 * a password, a marketing SMS's opt-out page, an OTP sent and verified with its code. Returns
 * each request's status.
 */
export async function visitSecretPaths(stack: ChaosStack, tenant: Tenant) {
  const api = stack.apiUrls[0] as string;
  const nonce = randomBytes(4).toString('hex');

  const invitation = await stack.admin([
    'invite',
    'create',
    '--workspace',
    tenant.slug,
    '--email',
    `invitee-${nonce}@chaos.test`,
    '--role',
    'developer',
  ]);
  const invitationPage = await call(api, 'GET', `/console/invitations/${invitation.token}`);

  const email = `member-${nonce}@chaos.test`;
  const password = `Chaos-${randomBytes(12).toString('base64url')}`;
  await stack.admin([
    'user',
    'create',
    '--workspace',
    tenant.slug,
    '--email',
    email,
    '--password',
    password,
  ]);
  const signIn = await signInToConsole(api, email, password);

  // Numbers of their own: none of the keyless scenarios' sends goes to +61479 (each stack is new).
  const [optOutTo, otpTo] = recipients('+61479', 2);
  const marketing = `Chaos offer ${nonce}: 10% off. Opt out: {opt_out_url}`;
  const sent = await call(api, 'POST', '/api/v1/messages', {
    token: tenant.token,
    key: `chaos-marketing-${nonce}`,
    body: { recipients: [optOutTo], message: marketing, message_purpose: 'marketing' },
  });
  let optOutPage: Answer | undefined;
  if (sent.status === 202) {
    const link = await waitUntil(
      'the marketing SMS at the inbox',
      async () =>
        (await readInbox(stack.simulatorUrl))
          .find((message) => message.to === optOutTo && message.body.includes(nonce))
          ?.body.match(/\/o\/[A-Za-z0-9_-]+/)?.[0],
      60_000,
    );
    optOutPage = await call(api, 'GET', link);
  }

  const otp = await call(api, 'POST', '/api/v1/otp/send', {
    token: tenant.token,
    key: `chaos-otp-${nonce}`,
    body: { recipient: otpTo, purpose: 'login' },
  });
  let verified: Answer | undefined;
  if (otp.status === 202) {
    const code = await waitUntil(
      'the OTP at the inbox',
      async () =>
        (await readInbox(stack.simulatorUrl))
          .find((message) => message.to === otpTo)
          ?.body.match(/(?<!\d)\d{4,8}(?!\d)/)?.[0],
      60_000,
    );
    verified = await call(api, 'POST', '/api/v1/otp/verify', {
      token: tenant.token,
      body: { recipient: otpTo, request_id: otp.body.data.request_id, code },
    });
  }
  return {
    invitation_page: invitationPage.status,
    sign_in: signIn,
    marketing_send: sent.status,
    opt_out_page: optOutPage?.status ?? null,
    otp_send: otp.status,
    otp_verify: verified?.status ?? null,
  };
}

/** The console's sign-in form over HTTP: its CSRF field and cookie, then the post. */
async function signInToConsole(api: string, email: string, password: string) {
  const form = await fetch(`${api}/console/sign-in`, { signal: AbortSignal.timeout(10_000) });
  const page = await form.text();
  const cookies = form.headers.getSetCookie().map((cookie) => cookie.split(';')[0]);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  const response = await fetch(`${api}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookies.join('; '),
    },
    body: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  for (const cookie of response.headers.getSetCookie()) {
    const value = cookie.split(';')[0]?.split('=').slice(1).join('=');
    if (value && value.length >= 16) rememberSecret('session cookie', value);
  }
  return response.status;
}

/**
 * The MCP OAuth sign-in asks for the TOTP code set up in the console (docs/spec.md §5.2 item 2, "completes
 * any required verification"): the consent is unreachable until the code is given, a wrong code is
 * refused, and a user whose workspace requires a factor they lack is refused outright. The
 * console and the OAuth sign-in share one throttle for failed passwords (commands/team/sign-in.ts).
 */
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beginTotpEnrolment, checkTotpCode } from '../../commands/team/totp.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, freshAddress } from '../support/console.js';
import { type McpServerUnderTest, openMcpServer } from '../support/mcp.js';
import { connectWithForms } from '../support/oauth-forms.js';

const CALLBACK = 'http://127.0.0.1:9/callback';
const PASSWORD = 'correct horse 1';
let server: McpServerUnderTest;

beforeAll(async () => {
  server = await openMcpServer({ TRUSTED_PROXIES: '127.0.0.1' });
});
afterAll(() => server.close());

const deps = () => ({ sql: server.sql, secret: server.admin.secret });

async function owner() {
  const slug = `o-${randomBytes(5).toString('hex')}`;
  await createWorkspace(deps(), { name: `OAuth ${slug}`, slug }, TEST_OPERATOR);
  const email = `owner@${slug}.test`;
  const { userId } = await addUser(
    deps(),
    {
      workspace: slug,
      email,
      password: PASSWORD,
      role: 'owner',
    },
    TEST_OPERATOR,
  );
  return { slug, email, userId };
}

const codeFor = (secret: string, stepsAhead = 0) =>
  new TOTP({
    secret: Secret.fromBase32(secret),
    digits: 6,
    period: 30,
    algorithm: 'SHA1',
  }).generate({
    timestamp: Date.now() + stepsAhead * 30_000,
  });

async function enrolled(userId: number): Promise<string> {
  const { secret } = await beginTotpEnrolment(deps(), userId);
  expect((await checkTotpCode(deps(), userId, codeFor(secret), { enable: true })).outcome).toBe(
    'accepted',
  );
  return secret;
}

/** Registers a client and opens /authorize: the sign-in form's sealed request. */
async function authorization(from: string): Promise<string> {
  const registered = await fetch(`${server.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({ client_name: 'Two-step test', redirect_uris: [CALLBACK] }),
  });
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const url = new URL(`${server.baseUrl}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_challenge: randomBytes(32).toString('base64url').slice(0, 43),
    code_challenge_method: 'S256',
    scope: 'mcp:use',
    state: 'two-step',
  }).toString();
  const page = await fetch(url, { headers: { 'x-forwarded-for': from } });
  return /name="request" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
}

async function post(path: string, form: Record<string, string>, from: string, cookie = '') {
  const response = await fetch(`${server.baseUrl}/oauth/${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-forwarded-for': from,
      cookie,
    },
    body: new URLSearchParams(form),
  });
  const setCookie = response.headers.get('set-cookie') ?? '';
  return {
    status: response.status,
    body: await response.text(),
    location: response.headers.get('location'),
    cookie: /herald_oauth_browser=[^;]+/.exec(setCookie)?.[0] ?? cookie,
  };
}

describe('the OAuth sign-in with a second factor', () => {
  it('asks for the code after the password; consent opens only with the right code', async () => {
    const user = await owner();
    const secret = await enrolled(user.userId);
    const from = freshAddress();
    const request = await authorization(from);
    const signedIn = await post(
      'sign-in',
      { request, email: user.email, password: PASSWORD },
      from,
    );
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toContain('<h1>Two-step verification</h1>');
    expect(signedIn.body).not.toContain('Approve');
    const pending = /name="request" value="([^"]+)"/.exec(signedIn.body)?.[1] ?? '';
    // Skipping the code: the consent treats the request as unknown.
    const skipped = await post(
      'consent',
      { request: pending, decision: 'approve' },
      from,
      signedIn.cookie,
    );
    expect(skipped.status).toBe(400);
    expect(skipped.body).toContain('This authorization request has expired or is unknown.');
    const wrong = await post(
      'code',
      { request: pending, code: codeFor(secret) === '000000' ? '111111' : '000000' },
      from,
      signedIn.cookie,
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('That code is not right.');
    // The code from another browser (no cookie) is not accepted either.
    expect((await post('code', { request: pending, code: codeFor(secret, 1) }, from)).status).toBe(
      400,
    );
    const right = await post(
      'code',
      { request: pending, code: codeFor(secret, 1) },
      from,
      signedIn.cookie,
    );
    expect(right.status).toBe(200);
    expect(right.body).toContain('Approve');
    const approved = await post(
      'consent',
      { request: pending, decision: 'approve' },
      from,
      signedIn.cookie,
    );
    expect(approved.status).toBe(303);
    expect(approved.location).toMatch(/^http:\/\/127\.0\.0\.1:9\/callback\?code=mcp_ac_/);
  });

  it('refuses a user whose workspace requires a second factor they have not set up', async () => {
    const user = await owner();
    await server.sql`update workspaces set require_second_factor = true where slug = ${user.slug}`;
    const from = freshAddress();
    const request = await authorization(from);
    const refused = await post('sign-in', { request, email: user.email, password: PASSWORD }, from);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain(
      'A workspace of yours requires two-step verification. Set it up in the Herald console (Profile), then connect again.',
    );
  });

  it('counts console and OAuth password failures against the same limits', async () => {
    const user = await owner();
    const from = freshAddress();
    for (let attempt = 0; attempt < 5; attempt++) {
      // A console sign-in, from the address the OAuth sign-in then comes from.
      const page = await new ConsoleBrowser(server.app, from).signIn(user.email, 'wrong password');
      expect(page.status).toBe(401);
    }
    const request = await authorization(from);
    const oauth = await post('sign-in', { request, email: user.email, password: PASSWORD }, from);
    expect(oauth.status).toBe(429);
    expect(oauth.body).toContain('Too many failed sign-in attempts. Try again in 15 minutes.');
  });
});

describe('Developer Tools → MCP & AI', () => {
  /** An MCP call with the token: 200 while the connection lives, 401 once revoked. */
  const callMcp = (accessToken: string) =>
    fetch(`${server.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  it("lists the connection with the /mcp URL; revoking it there makes the client's next call 401", async () => {
    const user = await owner();
    const client = await connectWithForms(server.baseUrl, {
      email: user.email,
      password: PASSWORD,
    });
    expect((await callMcp(client.accessToken)).status).toBe(200);
    const browser = new ConsoleBrowser(server.app);
    await browser.signIn(user.email, PASSWORD);
    const page = await browser.get(`/console/w/${user.slug}/developer/mcp`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`<code id="mcp-url">${server.baseUrl}/mcp</code>`);
    const id = /\/developer\/mcp\/(\d+)\/revoke/.exec(page.body)?.[1];
    expect(id).toBeDefined();
    const revoked = await browser.post(`/console/w/${user.slug}/developer/mcp/${id}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe(`/console/w/${user.slug}/developer/mcp?done=revoked`);
    expect((await callMcp(client.accessToken)).status).toBe(401);
  });

  it('lets a developer revoke only their own connections', async () => {
    const user = await owner();
    await connectWithForms(server.baseUrl, { email: user.email, password: PASSWORD });
    const devEmail = `dev@${user.slug}.test`;
    await addUser(
      deps(),
      {
        workspace: user.slug,
        email: devEmail,
        password: PASSWORD,
        role: 'developer',
      },
      TEST_OPERATOR,
    );
    const developer = new ConsoleBrowser(server.app);
    await developer.signIn(devEmail, PASSWORD);
    const page = await developer.get(`/console/w/${user.slug}/developer/mcp`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('/revoke');
    const [connection] = await server.sql<{ id: number }[]>`
      select k.id from oauth_connections k join workspaces w on w.id = k.workspace_id
      where w.slug = ${user.slug}`;
    const refused = await developer.post(
      `/console/w/${user.slug}/developer/mcp/${connection?.id}/revoke`,
      {},
    );
    expect(refused.status).toBe(403);
    const [still] = await server.sql<{ revoked: boolean }[]>`
      select revoked_at is not null as revoked from oauth_connections where id = ${connection?.id ?? 0}`;
    expect(still?.revoked).toBe(false);
  });
});

describe('get_quick_send_report', () => {
  const callTool = async (accessToken: string, id: number) => {
    const response = await fetch(`${server.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_quick_send_report', arguments: { quick_send_id: id } },
      }),
    });
    const body = (await response.json()) as {
      result: { structuredContent: { quick_send: { source: string } } };
    };
    return body.result.structuredContent.quick_send.source;
  };

  it('gives source quick_send for a console batch and api for a REST one', async () => {
    const user = await owner();
    const browser = new ConsoleBrowser(server.app);
    await browser.signIn(user.email, PASSWORD);
    await browser.get(`/console/w/${user.slug}/quick-send`);
    const number = `+6143${String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0')}`;
    const sent = await browser.post(`/console/w/${user.slug}/quick-send`, {
      recipients: number,
      message: 'From the console.',
      routing: 'own',
    });
    expect(sent.status).toBe(303);
    const consoleBatch = Number(/\/batches\/(\d+)$/.exec(sent.location ?? '')?.[1]);
    await browser.get(`/console/w/${user.slug}/developer/api-keys`);
    const created = await browser.post(`/console/w/${user.slug}/developer/api-keys`, {
      abilities: 'messages:send',
    });
    const token = /<code id="new-token">([^<]+)<\/code>/.exec(created.body)?.[1] ?? '';
    const rest = await fetch(`${server.baseUrl}/api/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipients: [number], message: 'From REST.' }),
    });
    expect(rest.status).toBe(202);
    const restBatch = ((await rest.json()) as { data: { message: { id: number } } }).data.message
      .id;
    const client = await connectWithForms(server.baseUrl, {
      email: user.email,
      password: PASSWORD,
    });
    expect(await callTool(client.accessToken, consoleBatch)).toBe('quick_send');
    expect(await callTool(client.accessToken, restBatch)).toBe('api');
  });
});

/**
 * A workspace's "two-step verification required" reaches MCP connections made before it was
 * turned on, as it reaches console sessions (domain/access.ts secondFactorMissing): a member
 * without a second factor is refused on the next tool call, as a missing permission is, and the
 * next refresh gets invalid_grant, as a lost membership does; once they set one up, both work.
 */
import { randomBytes } from 'node:crypto';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userCreate } from '../../cli/admin/users.js';
import {
  beginTotpEnrolment,
  checkTotpCode,
  requireSecondFactor,
} from '../../commands/team/totp.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { createMcpUser, type McpServerUnderTest, openMcpServer } from '../support/mcp.js';
import { connectWithForms } from '../support/oauth-forms.js';

const PASSWORD = 'correct horse battery';
const MISSING_FACTOR =
  'Insufficient access: this workspace requires two-step verification, which you have not set up. Set it up in the Herald console (Profile).';
let server: McpServerUnderTest;

beforeAll(async () => {
  server = await openMcpServer();
});
afterAll(() => server.close());

const deps = () => ({ sql: server.sql, secret: server.admin.secret });

/** Sets up and confirms a TOTP factor for the user, as the console's Profile page does. */
async function enrol(userId: number): Promise<void> {
  const { secret } = await beginTotpEnrolment(deps(), userId);
  const code = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate();
  expect((await checkTotpCode(deps(), userId, code, { enable: true })).outcome).toBe('accepted');
}

/** The tool's answer: its refusal text, or undefined when it ran. */
async function toolRefusal(accessToken: string): Promise<string | undefined> {
  const response = await fetch(server.resource, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_delivery_summary', arguments: {} },
    }),
  });
  expect(response.status).toBe(200);
  const { result } = (await response.json()) as {
    result: { isError?: boolean; content: { text: string }[] };
  };
  return result.isError ? result.content[0]?.text : undefined;
}

async function refresh(clientId: string, refreshToken: string) {
  const response = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("a workspace's two-step verification requirement and MCP connections", () => {
  it('refuses tool calls and refreshes of a member without a factor, until they set one up', async () => {
    const owner = await createMcpUser(server.admin);
    const email = `member-${randomBytes(3).toString('hex')}@${owner.workspaceSlug}.test`;
    const { id: memberId } = (
      await userCreate(server.admin, {
        workspace: owner.workspaceSlug,
        email,
        password: PASSWORD,
        role: 'developer',
      })
    ).json as { id: number };
    const client = await connectWithForms(server.baseUrl, { email, password: PASSWORD });
    expect(await toolRefusal(client.accessToken)).toBeUndefined();

    await enrol(owner.userId);
    await requireSecondFactor(
      deps(),
      { workspaceId: owner.workspaceId, ownerUserId: owner.userId, required: true },
      TEST_OPERATOR,
    );
    expect(await toolRefusal(client.accessToken)).toBe(MISSING_FACTOR);
    expect(await refresh(client.clientId, client.refreshToken)).toEqual({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description:
          'The workspace requires two-step verification, which the user has not set up.',
      },
    });

    await enrol(memberId);
    expect(await toolRefusal(client.accessToken)).toBeUndefined();
    const refreshed = await refresh(client.clientId, client.refreshToken);
    expect(refreshed.status).toBe(200);
    expect(await toolRefusal(refreshed.body.access_token as string)).toBeUndefined();
  });

  it('leaves a member of a workspace that does not require it alone', async () => {
    const owner = await createMcpUser(server.admin, { password: PASSWORD });
    const other = await createMcpUser(server.admin);
    const client = await connectWithForms(server.baseUrl, {
      email: owner.email,
      password: PASSWORD,
    });
    // Another workspace's requirement, of which this user is no member, changes nothing here.
    await enrol(other.userId);
    await requireSecondFactor(
      deps(),
      { workspaceId: other.workspaceId, ownerUserId: other.userId, required: true },
      TEST_OPERATOR,
    );
    expect(await toolRefusal(client.accessToken)).toBeUndefined();
    expect((await refresh(client.clientId, client.refreshToken)).status).toBe(200);
  });
});

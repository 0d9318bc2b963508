import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyCreate, keyRevoke } from '../../cli/admin/keys.js';
import { memberRemove, memberUpdate } from '../../cli/admin/members.js';
import { userCreate } from '../../cli/admin/users.js';
import { createTenant, openStack, PUBLIC_URL, type Stack, type Tenant } from '../support/stack.js';

const UNAUTHENTICATED = { message: 'Unauthenticated.' };

let stack: Stack;
let tenant: Tenant;
let other: Tenant;
let campaignId: number;

async function insertCampaign(workspaceId: number): Promise<number> {
  const [row] = await stack.sql<{ id: number }[]>`
    insert into campaigns (workspace_id, purpose, body, routing_type, provider_slug, status,
                           requested_recipients)
    values (${workspaceId}, 'transactional', 'hello', 'direct', 'own', 'queued', 1)
    returning id`;
  return (row as { id: number }).id;
}

function lookup(id: number | string, headers: Record<string, string> = {}) {
  return stack.app.inject({ method: 'GET', url: `/api/v1/messages/${id}`, headers });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  stack = await openStack();
  tenant = await createTenant(stack.admin);
  other = await createTenant(stack.admin);
  campaignId = await insertCampaign(tenant.workspaceId);
});

afterAll(() => stack.close());

describe('API key authentication', () => {
  it('accepts a valid key of the workspace', async () => {
    const response = await lookup(campaignId, bearer(tenant.token));
    expect(response.statusCode).toBe(200);
    expect(response.json().data.message.id).toBe(campaignId);
  });

  it.each([
    ['no Authorization header', {}],
    ['a Basic scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['a bare Bearer', { authorization: 'Bearer' }],
    ['a malformed token', { authorization: 'Bearer not-a-herald-key' }],
    ['a token with trailing words', { authorization: 'Bearer hld_abcdefgh_x extra' }],
  ])('answers 401 for %s', async (_case, headers) => {
    const response = await lookup(campaignId, headers);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHENTICATED);
  });

  it.each([
    ['bearer', 'lower case'],
    ['BEARER', 'upper case'],
    ['bEaReR', 'mixed case'],
  ])('accepts the scheme written %s (%s): it is case-insensitive', async (scheme) => {
    const response = await lookup(campaignId, { authorization: `${scheme} ${tenant.token}` });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.message.id).toBe(campaignId);
  });

  it('answers 401 for a lower-case scheme with a key that was never issued', async () => {
    const forged = `hld_abcdefgh_${'A'.repeat(43)}`;
    const response = await lookup(campaignId, { authorization: `bearer ${forged}` });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHENTICATED);
  });

  it('answers 401 for a well-formed token that was never issued', async () => {
    const forged = `hld_abcdefgh_${'A'.repeat(43)}`;
    const response = await lookup(campaignId, bearer(forged));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHENTICATED);
  });

  it('never accepts a cookie as a credential', async () => {
    const response = await lookup(campaignId, {
      cookie: `herald_session=${tenant.token}; token=${tenant.token}`,
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHENTICATED);
  });

  it('answers 401 once a key is revoked', async () => {
    const key = await tenant.keyWith(['messages:read']);
    expect((await lookup(campaignId, bearer(key.token))).statusCode).toBe(200);
    await keyRevoke(stack.admin, { id: String(key.id) });
    const response = await lookup(campaignId, bearer(key.token));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHENTICATED);
  });

  it('answers 401 when the workspace has lost its API entitlement', async () => {
    const suspended = await createTenant(stack.admin);
    await stack.sql`update workspaces set api_enabled = false where id = ${suspended.workspaceId}`;
    const response = await lookup(1, bearer(suspended.token));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHENTICATED);
  });

  it('answers 403 naming the missing ability', async () => {
    const key = await tenant.keyWith(['messages:send', 'otp:send']);
    const response = await lookup(campaignId, bearer(key.token));
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      message: 'This API key does not have the "messages:read" ability.',
    });
  });

  it('records when a key was last used', async () => {
    const key = await tenant.keyWith(['messages:read']);
    await lookup(campaignId, bearer(key.token));
    await expect
      .poll(async () => {
        const [row] = await stack.sql<{ lastUsedAt: Date | null }[]>`
          select last_used_at from api_keys where id = ${key.id}`;
        return row?.lastUsedAt;
      })
      .toBeInstanceOf(Date);
  });
});

describe("API keys and their user's membership", () => {
  /** A second member of the tenant and a key made for them. */
  async function memberWithKey(): Promise<{ email: string; token: string }> {
    const email = `member-${Math.random().toString(36).slice(2)}@${tenant.slug}.test`;
    await userCreate(stack.admin, { workspace: tenant.slug, email, password: 'correct horse 1' });
    const { token } = (
      await keyCreate(stack.admin, {
        workspace: tenant.slug,
        user: email,
        abilities: 'messages:read',
      })
    ).json as { token: string };
    expect((await lookup(campaignId, bearer(token))).statusCode).toBe(200);
    return { email, token };
  }

  it("answers 401 once the key's user is removed from the workspace", async () => {
    const { email, token } = await memberWithKey();
    await memberRemove(stack.admin, { workspace: tenant.slug, email });
    const response = await lookup(campaignId, bearer(token));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHENTICATED);
  });

  it('revokes the keys of a removed member: rejoining revives none', async () => {
    const { email, token } = await memberWithKey();
    const removal = await memberRemove(stack.admin, { workspace: tenant.slug, email });
    expect(removal.human).toBe(`Removed ${email} from ${tenant.slug} and revoked 1 API key`);
    await userCreate(stack.admin, { workspace: tenant.slug, email, password: 'correct horse 1' });
    const response = await lookup(campaignId, bearer(token));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHENTICATED);
  });

  it('answers 401 for the key of a member removed before removals revoked keys', async () => {
    const { email, token } = await memberWithKey();
    // As a removal made by an older version left it: the membership gone, the key live.
    await stack.sql`
      delete from workspace_members m using users u
      where m.workspace_id = ${tenant.workspaceId} and u.id = m.user_id and u.email = ${email}`;
    const response = await lookup(campaignId, bearer(token));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(UNAUTHENTICATED);
  });

  it("answers 401 while the key's user is suspended, and works again once reinstated", async () => {
    const { email, token } = await memberWithKey();
    await memberUpdate(stack.admin, { workspace: tenant.slug, email, status: 'suspended' });
    const suspended = await lookup(campaignId, bearer(token));
    expect(suspended.statusCode).toBe(401);
    expect(suspended.json()).toEqual(UNAUTHENTICATED);
    await memberUpdate(stack.admin, { workspace: tenant.slug, email, status: 'active' });
    const reinstated = await lookup(campaignId, bearer(token));
    expect(reinstated.statusCode).toBe(200);
    expect(reinstated.json().data.message.id).toBe(campaignId);
  });

  it('keeps accepting a key made without a user', async () => {
    const { token } = (
      await keyCreate(stack.admin, { workspace: tenant.slug, abilities: 'messages:read' })
    ).json as { token: string };
    const response = await lookup(campaignId, bearer(token));
    expect(response.statusCode).toBe(200);
    expect(response.json().data.message.id).toBe(campaignId);
  });
});

describe('request ids', () => {
  const requestIdOf = async (given?: string) =>
    (await lookup(campaignId, given === undefined ? {} : { 'x-request-id': given })).headers[
      'x-request-id'
    ];
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it.each([
    ['a UUID', '0f9c1f5e-3d3a-4b8e-9d55-7a7a2f0c1b2e'],
    ['letters, digits and ._:-', 'trace.01:span_2-x'],
    ['128 characters', 'r'.repeat(128)],
  ])("keeps the client's x-request-id when it is %s", async (_case, given) => {
    expect(await requestIdOf(given)).toBe(given);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['129 characters', 'r'.repeat(129)],
    ['with a space', 'abc def'],
    ['with a backslash and braces', 'abc\\n{"level":50}'],
    ['with quotes and braces', '"}{"admin":true'],
    ['non-ASCII', 'réq-1'],
  ])('answers with a fresh UUID when the x-request-id is %s', async (_case, given) => {
    const id = await requestIdOf(given);
    expect(id).toMatch(UUID);
    expect(id).not.toBe(given);
  });
});

describe('workspace isolation', () => {
  it("answers 404 for another workspace's campaign, exactly as for an unknown one", async () => {
    const foreign = await lookup(campaignId, bearer(other.token));
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({
      title: 'Not Found',
      detail: `Campaign ${campaignId} was not found.`,
      instance: `${PUBLIC_URL}/api/v1/messages/${campaignId}`,
      code: 'NOT-404',
      link: '',
    });
  });

  it('answers 404 for a non-integer campaign id', async () => {
    const response = await lookup('12abc', bearer(tenant.token));
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({
      code: 'NOT-404',
      instance: `${PUBLIC_URL}/api/v1/messages/12abc`,
    });
  });
});

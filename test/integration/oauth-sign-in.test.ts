/**
 * The authorization server's sign-in under attack: failed sign-ins are throttled per account and
 * client address, per client address, and per account from every address (the same answer
 * whether or not the account exists, exact under concurrency; an attacker's failures do not lock
 * the owner out from their own address), a flood of password checks does not stall the process,
 * and a malformed request id on any page is the "expired" page, never a 500.
 *
 * The server trusts X-Forwarded-For from loopback (TRUSTED_PROXIES), so each test signs in from
 * client addresses of its own and never shares a throttle bucket with another test.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpUser, type McpServerUnderTest, openMcpServer } from '../support/mcp.js';

const CALLBACK = 'http://127.0.0.1:9/callback';
const INCORRECT = 'The email or password is incorrect.';
const THROTTLED = 'Too many failed sign-in attempts. Try again in 15 minutes.';
const EXPIRED = 'This authorization request has expired or is unknown.';

let server: McpServerUnderTest;

beforeAll(async () => {
  server = await openMcpServer({ TRUSTED_PROXIES: '127.0.0.1' });
});
afterAll(() => server.close());

/** A client address no other test uses (TEST-NET-2 and -3 ranges, drawn at random). */
function freshAddress(): string {
  return `${randomInt(2) === 0 ? '198.51.100' : '203.0.113'}.${randomInt(1, 255)}`;
}
const usedAddresses = new Set<string>();
function newAddress(): string {
  for (;;) {
    const address = `${freshAddress()}`;
    if (!usedAddresses.has(address)) {
      usedAddresses.add(address);
      return address;
    }
  }
}

/** A registered client and the sign-in page's request field for it. */
async function startAuthorization(from = newAddress()): Promise<string> {
  const registered = await fetch(`${server.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({ client_name: 'Sign-in test', redirect_uris: [CALLBACK] }),
  });
  expect(registered.status).toBe(201);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const url = new URL(`${server.baseUrl}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_challenge: randomBytes(32).toString('base64url').slice(0, 43),
    code_challenge_method: 'S256',
    scope: 'mcp:use',
    state: 'sign-in-test',
  }).toString();
  const page = await fetch(url, { headers: { 'x-forwarded-for': from } });
  expect(page.status).toBe(200);
  const request = /name="request" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!request) throw new Error('no request field on the sign-in page');
  return request;
}

interface Answer {
  status: number;
  retryAfter: string | null;
  body: string;
}

async function signIn(
  request: string,
  credentials: { email: string; password: string },
  from: string,
  prefix = '/oauth',
): Promise<Answer> {
  const response = await fetch(`${server.baseUrl}${prefix}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from },
    body: new URLSearchParams({ request, ...credentials }),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: await response.text(),
  };
}

const alert = (text: string) => `<p class="alert error" role="alert">${text}</p>`;

function expectThrottled(answer: Answer) {
  expect(answer.status).toBe(429);
  const retryAfter = Number(answer.retryAfter);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThan(840);
  expect(retryAfter).toBeLessThanOrEqual(900);
  expect(answer.body).toContain(alert(THROTTLED));
}

function expectIncorrect(answer: Answer) {
  expect(answer.status).toBe(401);
  expect(answer.retryAfter).toBeNull();
  expect(answer.body).toContain(alert(INCORRECT));
}

describe('failed sign-ins, per account and address', () => {
  it('answers the sixth wrong password from one address within 15 minutes with 429 and Retry-After, and the right one then too', async () => {
    const user = await createMcpUser(server.admin);
    const request = await startAuthorization();
    const from = newAddress();
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expectIncorrect(await signIn(request, { email: user.email, password: 'wrong' }, from));
    }
    expectThrottled(await signIn(request, { email: user.email, password: 'wrong' }, from));
    expectThrottled(await signIn(request, user, from));
    // Another spelling of the same email is the same account.
    expectThrottled(await signIn(request, { ...user, email: user.email.toUpperCase() }, from));
  });

  it("does not lock the owner out: five wrong passwords from an attacker's address leave their own address open", async () => {
    const user = await createMcpUser(server.admin);
    const request = await startAuthorization();
    const attacker = newAddress();
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expectIncorrect(await signIn(request, { email: user.email, password: 'wrong' }, attacker));
    }
    expectThrottled(await signIn(request, { email: user.email, password: 'wrong' }, attacker));
    const owner = await signIn(request, user, newAddress());
    expect(owner.status).toBe(200);
    expect(owner.body).toContain('<h1>Authorize Sign-in test</h1>');
    // The attacker's address stays refused for this account.
    expectThrottled(await signIn(request, user, attacker));
  });

  it('answers an account that does not exist exactly as one that does', async () => {
    const request = await startAuthorization();
    const user = await createMcpUser(server.admin);
    const unknown = `nobody-${randomBytes(4).toString('hex')}@nowhere.test`;
    const answers: Record<'known' | 'unknown', Answer[]> = { known: [], unknown: [] };
    const from = { known: newAddress(), unknown: newAddress() };
    for (let attempt = 1; attempt <= 6; attempt += 1) {
      answers.known.push(await signIn(request, { email: user.email, password: 'x' }, from.known));
      answers.unknown.push(await signIn(request, { email: unknown, password: 'x' }, from.unknown));
    }
    for (const kind of ['known', 'unknown'] as const) {
      for (const answer of answers[kind].slice(0, 5)) expectIncorrect(answer);
      expectThrottled(answers[kind][5] as Answer);
    }
    const strip = ({ retryAfter: _, ...answer }: Answer) => answer;
    expect(answers.known.map(strip)).toEqual(answers.unknown.map(strip));
  });

  it('lets five guesses through, no more, when 30 wrong guesses and the right password race from one address', async () => {
    const user = await createMcpUser(server.admin);
    const request = await startAuthorization();
    const from = newAddress();
    const guesses = Array.from({ length: 30 }, (_, index) =>
      signIn(request, { email: user.email, password: `guess-${index}` }, from),
    );
    const right = signIn(request, user, from);
    const answers = await Promise.all([...guesses, right]);
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 429)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(26);
    // The right password got through only if it was one of the five.
    expect([200, 429]).toContain((await right).status);
    expectThrottled(await signIn(request, user, from));
  });

  it('opens again once the failures are 15 minutes old', async () => {
    const user = await createMcpUser(server.admin);
    const request = await startAuthorization();
    const from = newAddress();
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expectIncorrect(await signIn(request, { email: user.email, password: 'wrong' }, from));
    }
    expectThrottled(await signIn(request, user, from));
    // 15 minutes pass for this account's and this address's failures (the others are fresh).
    await server.sql`
      update sign_in_failures set failed_at = failed_at - interval '15 minutes'
      where failed_at > now() - interval '1 minute'`;
    const signedIn = await signIn(request, user, from);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toContain('<h1>Authorize Sign-in test</h1>');
  });
});

describe('failed sign-ins, per account from every address', () => {
  /** Ten addresses, five wrong passwords each: the fewest addresses that reach the limit. */
  async function failFromTenAddresses(request: string, email: string): Promise<void> {
    for (let address = 1; address <= 10; address += 1) {
      const from = newAddress();
      for (let attempt = 1; attempt <= 5; attempt += 1) {
        expectIncorrect(await signIn(request, { email, password: `wrong-${attempt}` }, from));
      }
    }
  }

  it('answers the 51st failure within 15 minutes with 429 from any address, the right password included', async () => {
    const user = await createMcpUser(server.admin);
    const request = await startAuthorization();
    await failFromTenAddresses(request, user.email);
    expectThrottled(await signIn(request, { email: user.email, password: 'wrong' }, newAddress()));
    expectThrottled(await signIn(request, user, newAddress()));
  });

  it('lets the last five guesses through, no more, when 30 addresses race for them', async () => {
    const user = await createMcpUser(server.admin);
    const request = await startAuthorization();
    // 45 failures first: five attempts are left to the account.
    for (let address = 1; address <= 9; address += 1) {
      const from = newAddress();
      for (let attempt = 1; attempt <= 5; attempt += 1) {
        expectIncorrect(await signIn(request, { email: user.email, password: 'wrong' }, from));
      }
    }
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        signIn(request, { email: user.email, password: `guess-${index}` }, newAddress()),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25);
    expectThrottled(await signIn(request, user, newAddress()));
  });
});

describe('failed sign-ins, per client address', () => {
  it('answers the 21st failure from one address within 15 minutes with 429, whichever accounts it tried', async () => {
    const request = await startAuthorization();
    const from = newAddress();
    const someone = () => `nobody-${randomBytes(6).toString('hex')}@spray.test`;
    for (let attempt = 1; attempt <= 20; attempt += 1) {
      expectIncorrect(await signIn(request, { email: someone(), password: 'Winter2026!' }, from));
    }
    const user = await createMcpUser(server.admin);
    expectThrottled(await signIn(request, user, from));
    // The account itself is not locked: from another address the right password signs in.
    expect((await signIn(request, user, newAddress())).status).toBe(200);
  });

  it('is the same limit under /mcp/oauth', async () => {
    const request = await startAuthorization();
    const from = newAddress();
    for (let attempt = 1; attempt <= 20; attempt += 1) {
      const email = `nobody-${attempt}-${randomBytes(4).toString('hex')}@spray.test`;
      const prefix = attempt % 2 === 0 ? '/mcp/oauth' : '/oauth';
      expectIncorrect(await signIn(request, { email, password: 'x' }, from, prefix));
    }
    expectThrottled(
      await signIn(request, { email: 'a@spray.test', password: 'x' }, from, '/mcp/oauth'),
    );
  });
});

describe('a flood of password checks', () => {
  async function milliseconds(work: () => Promise<unknown>): Promise<number> {
    const started = performance.now();
    await work();
    return Math.round(performance.now() - started);
  }

  it('does not stall other requests or the thread pool while 16 sign-ins hash at once', async () => {
    const request = await startAuthorization();
    const health = () => fetch(`${server.baseUrl}/health`).then((response) => response.text());
    const fileRead = () => readFile(new URL('../../package.json', import.meta.url));
    await health();
    const flood = Promise.all(
      Array.from({ length: 16 }, (_, index) =>
        signIn(
          request,
          { email: `flood-${index}-${randomBytes(4).toString('hex')}@flood.test`, password: 'x' },
          newAddress(),
        ),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const during = { health: [] as number[], fileRead: [] as number[] };
    for (let sample = 0; sample < 5; sample += 1) {
      during.health.push(await milliseconds(health));
      during.fileRead.push(await milliseconds(fileRead));
    }
    const answers = await flood;
    console.log(JSON.stringify({ duringFlood: during }));
    expect(answers.map((answer) => answer.status)).toEqual(Array(16).fill(401));
    // A file read waits for a free libuv thread: behind 12 queued hashes it took 2.4-2.8 s.
    expect(Math.max(...during.fileRead)).toBeLessThan(250);
    expect(Math.max(...during.health)).toBeLessThan(250);
  });
});

describe('malformed request ids', () => {
  it.each([
    ['sign-in', { email: 'a@b.test', password: 'x' }],
    ['workspace', { workspace: '1' }],
    ['consent', { decision: 'approve' }],
  ])('answer %s with the expired page under /oauth and /mcp/oauth', async (path, fields) => {
    for (const prefix of ['/oauth', '/mcp/oauth']) {
      for (const request of [
        'not-a-uuid',
        '00000000-0000-0000-0000-00000000000g',
        '1'.repeat(5000),
        '',
        'eyJmb28iOjF9.AAAA',
      ]) {
        const response = await fetch(`${server.baseUrl}${prefix}/${path}`, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'x-forwarded-for': newAddress(),
          },
          body: new URLSearchParams({ request, ...fields }),
        });
        expect({ prefix, request: request.slice(0, 40), status: response.status }).toEqual({
          prefix,
          request: request.slice(0, 40),
          status: 400,
        });
        expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(await response.text()).toContain(`<p>${EXPIRED} Start again from your client.</p>`);
      }
    }
  });
});

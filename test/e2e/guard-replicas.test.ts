import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { setGuard } from '../../commands/fraud-guard/settings.js';
import { addCredits } from '../../db/credits.js';
import { TEST_OPERATOR } from '../support/actors.js';
import {
  ensureStopped,
  freePorts,
  type HeraldProcess,
  heraldEnv,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';
import { inbox } from '../support/send.js';
import { createTenant, openStack, type Stack, type Tenant } from '../support/stack.js';

const simulatorUrl = inject('simulatorUrl');

/**
 * Two `herald api` processes, each with its own pool, in front of one Postgres: the fraud guard's
 * per-key rate limit and per-recipient OTP limit are one limit across them, not one each.
 */
describe('the fraud guard over two api processes', { timeout: 180_000 }, () => {
  let stack: Stack;
  let tenant: Tenant;
  let dataDir: string;
  const apis: HeraldProcess[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    stack = await openStack();
    tenant = await createTenant(stack.admin);
    await addCredits(stack.sql, tenant.workspaceId, 100);
    dataDir = await mkdtemp(join(tmpdir(), 'herald-guard-replicas-'));
    for (const port of await freePorts(2)) {
      const api = spawnHerald(
        ['api'],
        heraldEnv({
          DATABASE_URL: inject('databaseUrl'),
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          HERALD_SECRET: inject('secret'),
          HERALD_DATA_DIR: dataDir,
          PORT: String(port),
        }),
      );
      apis.push(api);
      urls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(apis.map((api) => untilRunning(api, 90_000)));
  }, 150_000);

  afterAll(async () => {
    await Promise.all(apis.map((api) => ensureStopped(api)));
    await stack?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  const call = (index: number, path: string, body?: object) =>
    fetch(`${urls[index % 2]}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: {
        authorization: `Bearer ${tenant.token}`,
        ...(body && { 'content-type': 'application/json' }),
      },
      body: body && JSON.stringify(body),
    });

  it('sends exactly 5 of 30 concurrent codes to one number, half through each process', async () => {
    const recipient = `+61475${String(Math.floor(Math.random() * 1_000_000)).padStart(6, '0')}`;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        call(index, '/api/v1/otp/send', { recipient, purpose: 'login' }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(5).fill(202), ...Array(25).fill(429)]);
    // A send answered `pending` is still on its way: count once every one has settled.
    await waitUntil(
      'the sends to settle',
      async () => {
        const [{ pending }] = (await stack.sql`
          select count(*)::int as pending from otp_requests
          where recipient = ${recipient} and status = 'pending'`) as [{ pending: number }];
        return pending === 0 ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(await inbox(simulatorUrl, recipient)).toHaveLength(5);
  });

  it('lets exactly one key bucket of 10 through of 40 concurrent requests', async () => {
    await setGuard(stack.admin, { workspace: tenant.slug, keyRate: '10/m' }, TEST_OPERATOR);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, index) => call(index, '/api/v1/messages/1')),
    );
    const through = answers.filter((answer) => answer.status !== 429);
    expect(through).toHaveLength(10);
    expect(through.map((answer) => answer.status)).toEqual(Array(10).fill(404));
    // Both processes answered some of them, and both refused some.
    for (const url of urls) {
      const served = answers.filter((answer) => answer.url.startsWith(url));
      expect(served.some((answer) => answer.status === 429)).toBe(true);
    }
  });
});

/**
 * Rotating HERALD_SECRET under load (docs/operations.md "Secret rotation"), as an operator does it: data
 * written under key A; every process restarted with the ring "B,A"; `herald secrets rotate`;
 * every process restarted with "B" alone. Campaigns go out the whole time through `herald api`
 * and `herald worker` processes, alternately through two providers whose secrets come from
 * HERALD_SECRET: a simulator (its credential and receipt key derived from the ring's newest key)
 * and a Twilio provider whose credentials are encrypted (against the local Twilio-format peer).
 * Every message the api accepted is delivered exactly once, through either provider, sends under
 * B alone reach Twilio; and
 * everything encrypted under A is readable under B alone afterwards.
 *
 * A restarting worker lets the chunks in flight finish before it stops (server/worker.ts), so
 * Twilio's messages, which cannot be looked up by reference, arrive exactly once too.
 *
 * `secrets rotate` rewrites every ciphertext of the database it runs on, so this file runs on a
 * database and a Temporal namespace of its own: the run's shared worker keeps its one key.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { providerCreate } from '../../cli/admin/providers.js';
import { rotateSecrets } from '../../commands/operations/rotate-secrets.js';
import { beginTotpEnrolment, totpSecretContext } from '../../commands/team/totp.js';
import { rotateWebhookSecret } from '../../commands/webhooks/webhook-tools.js';
import { createWebhookEndpoint } from '../../commands/webhooks/webhooks.js';
import { parseEnv } from '../../config/env.js';
import { createSql, type Sql } from '../../db/client.js';
import { addCredits } from '../../db/credits.js';
import { migrate } from '../../db/migrate.js';
import { insertProvider } from '../../db/providers.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import {
  decryptCredentials,
  encryptCredentials,
  providerCredentialsContext,
} from '../../security/credentials.js';
import { webhookSecretContext } from '../../security/webhook-signature.js';
import { TEST_OPERATOR } from '../support/actors.js';
import {
  ensureStopped,
  freePorts,
  type HeraldProcess,
  heraldEnv,
  interrupt,
  runHeraldJson,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';
import { inbox, numbers } from '../support/send.js';
import { createTenant, type Tenant } from '../support/stack.js';
import { startTwilioPeer, type TwilioPeer } from '../support/twilio-peer.js';

const KEY_A = randomBytes(32).toString('base64url');
const KEY_B = randomBytes(32).toString('base64url');
const ACCOUNT_SID = `AC${'7e'.repeat(16)}`;
const AUTH_TOKEN = 'tw-auth-token-rotation-91c2';
const RECIPIENTS_PER_SEND = 4;

const suffix = randomBytes(4).toString('hex');
const database = `herald_rotation_${suffix}`;
const namespace = `herald-rotation-${suffix}`;

describe('rotating HERALD_SECRET under load', { timeout: 420_000 }, () => {
  let admin: Sql;
  let sql: Sql;
  let databaseUrl: string;
  let dataDir: string;
  let apiPort: number;
  let peer: TwilioPeer;
  let simulator: RunningSimulator;
  let tenant: Tenant;
  let api: HeraldProcess | undefined;
  let worker: HeraldProcess | undefined;
  const stoppedLogs: string[] = [];

  const envWith = (ring: string) =>
    heraldEnv({
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: namespace,
      HERALD_SECRET: ring,
      HERALD_DATA_DIR: dataDir,
      PORT: String(apiPort),
      PUBLIC_URL: `http://127.0.0.1:${apiPort}`,
      OWN_PROVIDER_URL: inject('simulatorUrl'),
    });

  /** Stops the running api and worker (gracefully) and starts both with `ring`. */
  async function restartWith(ring: string) {
    await Promise.all([api && interrupt(api, 60_000), worker && interrupt(worker, 60_000)]);
    for (const proc of [api, worker])
      if (proc) stoppedLogs.push(`--- ${proc.args.join(' ')} ---\n${proc.stderr().slice(-6000)}`);
    worker = spawnHerald(['worker'], envWith(ring));
    api = spawnHerald(['api'], envWith(ring));
    await Promise.all([untilRunning(worker, 90_000), untilRunning(api, 90_000)]);
  }

  beforeAll(async () => {
    admin = createSql(inject('databaseUrl'), { max: 1 });
    await admin.unsafe(`create database ${database}`);
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
    sql = createSql(databaseUrl, { max: 2 });
    await migrate(sql);

    const connection = await Connection.connect({ address: inject('temporalAddress') });
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    await waitUntil(
      `namespace ${namespace}`,
      async () =>
        (await connection.workflowService.describeNamespace({ namespace }).then(
          () => true,
          () => undefined,
        )) ?? undefined,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await connection.close();

    dataDir = await mkdtemp(join(tmpdir(), 'herald-rotation-'));
    [apiPort] = (await freePorts(1)) as [number];
    peer = await startTwilioPeer({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  });

  afterAll(async () => {
    await Promise.all([ensureStopped(api), ensureStopped(worker)]);
    await peer?.close();
    await simulator?.close();
    await sql?.end();
    await admin?.unsafe(`drop database if exists ${database} with (force)`);
    await admin?.end();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 120_000);

  it('settles every accepted message once, sends none twice, and leaves nothing only the old key reads', async () => {
    // Everything written under A alone: the API key, the provider's credentials, a webhook's
    // signing secret, a TOTP secret.
    const underA = {
      env: parseEnv({ LOG_LEVEL: 'silent' }),
      secret: KEY_A,
      sql,
      actor: TEST_OPERATOR,
    };
    tenant = await createTenant(underA);
    await addCredits(sql, tenant.workspaceId, 100_000);
    await providerCreate(underA, {
      workspace: tenant.slug,
      slug: 'tw',
      type: 'twilio',
      'account-sid': ACCOUNT_SID,
      'auth-token': AUTH_TOKEN,
      from: '+15005550006',
      'base-url': peer.url,
      name: 'Twilio',
    });
    const webhook = await createWebhookEndpoint(
      { ...underA, env: parseEnv({ LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }) },
      { workspace: tenant.slug, url: 'http://127.0.0.1:9/hooks', events: ['message.sent'] },
      TEST_OPERATOR,
    );
    const totp = await beginTotpEnrolment(underA, tenant.userId);
    simulator = await startSimulator({ port: 0 });
    await insertProvider(sql, {
      workspaceId: tenant.workspaceId,
      slug: 'sim',
      name: 'Simulator',
      type: 'simulator',
      requiresSenderId: false,
      settings: { base_url: simulator.url },
    });

    await restartWith(KEY_A);

    // The load: a send of a few recipients every 150 ms through the api, whichever process is
    // up. A send the api did not answer 202 was not accepted and is not counted.
    type Phase = 'A' | 'B,A' | 'B';
    const accepted: {
      campaignId: number;
      recipients: string[];
      provider: 'sim' | 'tw';
      phase: Phase;
    }[] = [];
    const acceptedBy = { A: 0, 'B,A': 0, B: 0 };
    let phase: Phase = 'A';
    let refused = 0;
    let loading = true;
    const load = (async () => {
      while (loading) {
        const recipients = numbers(RECIPIENTS_PER_SEND);
        const provider = accepted.length % 2 === 0 ? 'sim' : 'tw';
        try {
          const response = await fetch(`http://127.0.0.1:${apiPort}/api/v1/messages`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${tenant.token}`,
              'content-type': 'application/json',
            },
            body: JSON.stringify({ recipients, message: 'Rotation', provider_slug: provider }),
          });
          const body = (await response.json()) as { data?: { message?: { id: number } } };
          if (response.status === 202 && body.data?.message) {
            accepted.push({ campaignId: body.data.message.id, recipients, provider, phase });
            acceptedBy[phase] += 1;
          } else refused += 1;
        } catch {
          refused += 1; // the api is restarting
        }
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    })();
    const acceptedAtLeast = (count: number) =>
      waitUntil(`${count} accepted sends`, async () => accepted.length >= count || undefined, {
        timeoutMs: 60_000,
      });

    await acceptedAtLeast(10);
    phase = 'B,A';
    await restartWith(`${KEY_B},${KEY_A}`);
    await acceptedAtLeast(accepted.length + 10);

    const rotated = await runHeraldJson(['secrets', 'rotate'], envWith(`${KEY_B},${KEY_A}`));
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json).toEqual({
      provider_credentials: { reencrypted: 1, current: 0, unreadable: 0 },
      webhook_secrets: { reencrypted: 1, current: 0, unreadable: 0 },
      webhook_previous_secrets: { reencrypted: 0, current: 0, unreadable: 0 },
      totp_secrets: { reencrypted: 1, current: 0, unreadable: 0 },
    });
    const again = await runHeraldJson(['secrets', 'rotate'], envWith(`${KEY_B},${KEY_A}`));
    expect(again.json).toEqual({
      provider_credentials: { reencrypted: 0, current: 1, unreadable: 0 },
      webhook_secrets: { reencrypted: 0, current: 1, unreadable: 0 },
      webhook_previous_secrets: { reencrypted: 0, current: 0, unreadable: 0 },
      totp_secrets: { reencrypted: 0, current: 1, unreadable: 0 },
    });
    await acceptedAtLeast(accepted.length + 5);

    phase = 'B';
    await restartWith(KEY_B);
    await acceptedAtLeast(accepted.length + 10);
    loading = false;
    await load;

    // Every accepted campaign completes.
    const status = async (campaignId: number) => {
      const [row] = await sql<{ status: string }[]>`
        select status from campaigns where id = ${campaignId}`;
      return row?.status;
    };
    for (const { campaignId } of accepted) {
      await waitUntil(
        `campaign ${campaignId} completed`,
        async () => ((await status(campaignId)) === 'completed' ? true : undefined),
        { timeoutMs: 120_000, intervalMs: 250, proc: worker },
      );
    }
    const recipientsOf = (provider: 'sim' | 'tw', phases: Phase[] = ['A', 'B,A', 'B']) =>
      accepted
        .filter((send) => send.provider === provider && phases.includes(send.phase))
        .flatMap((send) => send.recipients);

    // Through the simulator: every accepted message in its inbox exactly once.
    const inboxCounts = await Promise.all(
      recipientsOf('sim').map(async (to) => [to, (await inbox(simulator.url, to)).length]),
    );
    expect(inboxCounts.filter(([, count]) => count !== 1)).toEqual([]);

    // Through Twilio too, exactly once: a restarting worker lets its chunks in flight finish
    // (server/worker.ts SHUTDOWN_GRACE_TIME), so no submission is cut off unanswered.
    const atPeer = peer.messages.map((message) => message.to);
    expect(atPeer.length).toBe(new Set(atPeer).size);
    expect(atPeer.filter((to) => !recipientsOf('tw').includes(to))).toEqual([]);
    const missing = recipientsOf('tw').filter((to) => !atPeer.includes(to));
    const notSent = await sql<{ status: string; error: string | null }[]>`
      select status, error from campaign_messages where recipient = any(${missing})`;
    expect(notSent, stoppedLogs.join('\n')).toEqual([]);
    // Sent under B alone, after the rotation: the credentials decrypt under the new key.
    expect(recipientsOf('tw', ['B']).filter((to) => atPeer.includes(to)).length).toBeGreaterThan(0);
    expect(acceptedBy.A).toBeGreaterThan(0);
    expect(acceptedBy['B,A']).toBeGreaterThan(0);
    // The API key, hashed under A, was re-hashed under B by its use during the rotation.
    expect(acceptedBy.B).toBeGreaterThan(0);
    expect(peer.problems).toEqual([]);

    // Under B alone, what A encrypted is readable.
    const [provider] = await sql<{ credentials: Buffer }[]>`
      select credentials from providers where workspace_id = ${tenant.workspaceId} and slug = 'tw'`;
    expect(
      decryptCredentials(
        KEY_B,
        providerCredentialsContext(tenant.workspaceId, 'tw'),
        provider?.credentials as Buffer,
      ),
    ).toMatchObject({ auth_token: AUTH_TOKEN });
    const [endpoint] = await sql<{ secret: Buffer }[]>`
      select secret from webhook_endpoints where id = ${webhook.endpoint.id}`;
    expect(
      decryptCredentials(
        KEY_B,
        webhookSecretContext(tenant.workspaceId, webhook.endpoint.id),
        endpoint?.secret as Buffer,
      ),
    ).toBe(webhook.secret);
    const [user] = await sql<{ totpSecret: Buffer }[]>`
      select totp_secret from users where id = ${tenant.userId}`;
    expect(
      decryptCredentials(KEY_B, totpSecretContext(tenant.userId), user?.totpSecret as Buffer),
    ).toBe(totp.secret);
    console.info(
      `secret rotation under load: ${accepted.length} sends accepted (${JSON.stringify(acceptedBy)}), ` +
        `${refused} refused or unanswered during restarts; simulator ${recipientsOf('sim').length} ` +
        `messages, each once; Twilio ${atPeer.length} of ${recipientsOf('tw').length} at the peer, each once`,
    );
  });

  it('re-encrypts in batches, is idempotent, and leaves alone what no key of the ring opens', async () => {
    const keyC = randomBytes(32).toString('base64url');
    const stranger = randomBytes(32).toString('base64url');
    for (const [index, key] of [KEY_B, KEY_B, KEY_B, KEY_B, KEY_B, stranger].entries()) {
      const slug = `batch-${index}`;
      await insertProvider(sql, {
        workspaceId: tenant.workspaceId,
        slug,
        name: slug,
        type: 'twilio',
        requiresSenderId: false,
        settings: { base_url: peer.url, from: '+15005550006' },
        credentials: encryptCredentials(key, providerCredentialsContext(tenant.workspaceId, slug), {
          account_sid: ACCOUNT_SID,
          auth_token: `token-${index}`,
        }),
      });
    }
    const [{ providers } = { providers: 0 }] = await sql<{ providers: number }[]>`
      select count(*)::int as providers from providers where credentials is not null`;
    const deps = { sql, secret: `${keyC},${KEY_B}` };
    // The webhook's secret rotated under B with an overlap: the one it replaced, which signs
    // beside it for 24 h, is a ciphertext of its own that must move to the new key too.
    const [hook] = await sql<{ id: number; secret: Buffer }[]>`
      select id::int, secret from webhook_endpoints where workspace_id = ${tenant.workspaceId}`;
    const hookContext = webhookSecretContext(tenant.workspaceId, hook?.id as number);
    const replaced = decryptCredentials(KEY_B, hookContext, hook?.secret as Buffer);
    const rotatedHook = await rotateWebhookSecret(
      { sql, secret: KEY_B },
      { id: hook?.id as number, overlapHours: 24 },
      TEST_OPERATOR,
    );

    expect(await rotateSecrets(deps, TEST_OPERATOR, { batchSize: 2 })).toEqual({
      'provider-credentials': { reencrypted: providers - 1, current: 0, unreadable: 1 },
      'webhook-secrets': { reencrypted: 1, current: 0, unreadable: 0 },
      'webhook-previous-secrets': { reencrypted: 1, current: 0, unreadable: 0 },
      'totp-secrets': { reencrypted: 1, current: 0, unreadable: 0 },
    });
    expect(await rotateSecrets(deps, TEST_OPERATOR, { batchSize: 2 })).toEqual({
      'provider-credentials': { reencrypted: 0, current: providers - 1, unreadable: 1 },
      'webhook-secrets': { reencrypted: 0, current: 1, unreadable: 0 },
      'webhook-previous-secrets': { reencrypted: 0, current: 1, unreadable: 0 },
      'totp-secrets': { reencrypted: 0, current: 1, unreadable: 0 },
    });
    // Under C alone both of the webhook's signing secrets open: the new one and the one replaced.
    const [moved] = await sql<{ secret: Buffer; previousSecret: Buffer }[]>`
      select secret, previous_secret from webhook_endpoints where id = ${hook?.id as number}`;
    expect([
      decryptCredentials(keyC, hookContext, moved?.secret as Buffer),
      decryptCredentials(keyC, hookContext, moved?.previousSecret as Buffer),
    ]).toEqual([rotatedHook.secret, replaced]);
    const rows = await sql<{ slug: string; credentials: Buffer }[]>`
      select slug, credentials from providers
      where workspace_id = ${tenant.workspaceId} and slug like 'batch-%' order by slug`;
    const readable = rows.map((row) => {
      try {
        return decryptCredentials(
          keyC,
          providerCredentialsContext(tenant.workspaceId, row.slug),
          row.credentials,
        );
      } catch {
        return 'unreadable';
      }
    });
    expect(readable).toEqual([
      ...[0, 1, 2, 3, 4].map((index) => ({
        account_sid: ACCOUNT_SID,
        auth_token: `token-${index}`,
      })),
      'unreadable',
    ]);
  });
});

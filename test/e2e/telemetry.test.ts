import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEnv } from '../../config/env.js';
import { createSql } from '../../db/client.js';
import { addCredits } from '../../db/credits.js';
import { type RunningSimulator, startSimulator } from '../../providers/simulator/server.js';
import {
  ensureStopped,
  freePorts,
  type HeraldProcess,
  heraldEnv,
  repoRoot,
  spawnHerald,
  untilRunning,
  waitUntil,
} from '../support/processes.js';
import { inbox, numbers, setBehaviour } from '../support/send.js';
import { createTenant, registerTestNamespace, type Tenant } from '../support/stack.js';

/**
 * Traces and logs (issue 26, items 2 and 3) of a real deployment's shape: `herald api` and
 * `herald worker` as separate processes exporting OTLP to a real Jaeger (built from its Go module
 * by scripts/install-jaeger.sh), the `own` provider a simulator. One SMS sent through REST is
 * found in Jaeger as one trace, REST request to provider call; the run's logs (an OTP sent and
 * verified, a provider refusing a message) are JSON lines with their context, and hold no number,
 * body or code.
 */

const JAEGER = join(repoRoot, '.tools/jaeger/jaeger');

interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  processID: string;
  tags: { key: string; value: unknown }[];
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

/** Jaeger all-in-one on free ports: OTLP over HTTP in, the query API out, spans in memory. */
async function startJaeger(dir: string) {
  const [otlpPort, queryPort, queryGrpcPort] = (await freePorts(3)) as [number, number, number];
  const config = {
    service: {
      extensions: ['jaeger_storage', 'jaeger_query'],
      pipelines: {
        traces: {
          receivers: ['otlp'],
          processors: ['batch'],
          exporters: ['jaeger_storage_exporter'],
        },
      },
      telemetry: { metrics: { level: 'none' }, logs: { level: 'warn' } },
    },
    extensions: {
      jaeger_storage: { backends: { memstore: { memory: { max_traces: 10_000 } } } },
      jaeger_query: {
        storage: { traces: 'memstore' },
        http: { endpoint: `127.0.0.1:${queryPort}` },
        grpc: { endpoint: `127.0.0.1:${queryGrpcPort}` },
      },
    },
    receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${otlpPort}` } } } },
    processors: { batch: { timeout: '200ms' } },
    exporters: { jaeger_storage_exporter: { trace_storage: 'memstore' } },
  };
  // JSON is YAML: the collector's config loader reads it as such.
  const configPath = join(dir, 'jaeger.yaml');
  await writeFile(configPath, JSON.stringify(config));
  const { spawn } = await import('node:child_process');
  const child = spawn(JAEGER, ['--config', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const queryUrl = `http://127.0.0.1:${queryPort}`;
  await waitUntil(
    'Jaeger to serve its query API',
    async () => {
      if (child.exitCode !== null) throw new Error(`Jaeger exited: ${output}`);
      const response = await fetch(`${queryUrl}/api/services`).catch(() => undefined);
      return response?.ok ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  return { otlpUrl: `http://127.0.0.1:${otlpPort}`, queryUrl, child };
}

describe('traces in Jaeger and JSON logs, api and worker apart', { timeout: 240_000 }, () => {
  const namespace = `herald-telemetry-${randomBytes(4).toString('hex')}`;
  const sql = createSql(inject('databaseUrl'), { max: 2 });
  let dir: string;
  let jaeger: Awaited<ReturnType<typeof startJaeger>> | undefined;
  let simulator: RunningSimulator;
  let api: HeraldProcess | undefined;
  let worker: HeraldProcess | undefined;
  let apiUrl: string;
  let tenant: Tenant;

  beforeAll(async () => {
    if (!existsSync(JAEGER))
      throw new Error(`${JAEGER} is missing: run scripts/install-jaeger.sh (npm test does)`);
    dir = await mkdtemp(join(tmpdir(), 'herald-telemetry-'));
    jaeger = await startJaeger(dir);
    await registerTestNamespace(namespace);
    simulator = await startSimulator({ port: 0 });
    const [port] = (await freePorts(1)) as [number];
    apiUrl = `http://127.0.0.1:${port}`;
    const common = {
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: namespace,
      HERALD_SECRET: inject('secret'),
      HERALD_DATA_DIR: dir,
      PUBLIC_URL: apiUrl,
      PORT: String(port),
      OWN_PROVIDER_URL: simulator.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl,
      // The SDK's own variable: spans reach Jaeger within half a second, not five.
      OTEL_BSP_SCHEDULE_DELAY: '500',
      LOG_LEVEL: 'info',
    };
    worker = spawnHerald(['worker'], heraldEnv(common));
    api = spawnHerald(['api'], heraldEnv(common));
    await Promise.all([untilRunning(worker, 120_000), untilRunning(api, 120_000)]);
    tenant = await createTenant({ env: parseEnv({}), secret: inject('secret'), sql });
    await addCredits(sql, tenant.workspaceId, 100);
  }, 240_000);

  afterAll(async () => {
    await Promise.all([ensureStopped(api), ensureStopped(worker)]);
    await simulator?.close();
    jaeger?.child.kill('SIGTERM');
    await sql.end();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 90_000);

  const post = async (path: string, body: object) => {
    const response = await fetch(`${apiUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      body: (await response.json()) as { data?: { request_id?: string } },
    };
  };

  const jaegerGet = async (path: string) => {
    const response = await fetch(`${jaeger?.queryUrl}${path}`);
    return (await response.json()) as { data: JaegerTrace[] | null };
  };

  /** Polls Jaeger for the traces `search` names until one passes `ready`. */
  const traceWhere = (search: string, ready: (trace: JaegerTrace) => boolean) =>
    waitUntil(
      `a trace in Jaeger (${search})`,
      async () => (await jaegerGet(`/api/traces?${search}`)).data?.find(ready),
      { timeoutMs: 60_000, intervalMs: 500 },
    );

  const [recipient, otpRecipient, refusedRecipient] = numbers(3) as [string, string, string];
  const body = `Telemetry ${randomBytes(6).toString('hex')}`;
  const refusedBody = `Refused ${randomBytes(6).toString('hex')}`;

  it('finds one SMS send in Jaeger as one trace, REST request to provider call, and its receipt', async () => {
    const sent = await post('/api/v1/messages', { recipients: [recipient], message: body });
    expect(sent.status).toBe(202);
    await waitUntil(
      'the SMS at the simulator',
      async () => ((await inbox(simulator.url, recipient)).length > 0 ? true : undefined),
      { timeoutMs: 60_000, proc: worker },
    );

    const operation = encodeURIComponent('POST /api/v1/messages');
    const trace = await traceWhere(
      `service=herald-api&operation=${operation}&limit=20`,
      (candidate) => candidate.spans.some((span) => span.operationName === 'provider.submit'),
    );
    const named = (name: string) => {
      const span = trace.spans.find((each) => each.operationName === name);
      if (!span) throw new Error(`no ${name} span in ${trace.spans.map((s) => s.operationName)}`);
      return span;
    };
    const parentOf = (span: JaegerSpan) =>
      span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID;
    const serviceOf = (span: JaegerSpan) => trace.processes[span.processID]?.serviceName;

    const request = named('POST /api/v1/messages');
    const start = named('StartWorkflow:campaignWorkflow');
    const run = named('RunWorkflow:campaignWorkflow');
    const scheduled = named('StartActivity:submitChunk');
    const activity = named('RunActivity:submitChunk');
    const submit = named('provider.submit');
    for (const span of [request, start, run, scheduled, activity, submit])
      expect(span.traceID).toBe(trace.traceID);
    expect(parentOf(request)).toBeUndefined();
    expect(parentOf(start)).toBe(request.spanID);
    expect(parentOf(run)).toBe(start.spanID);
    expect(parentOf(scheduled)).toBe(run.spanID);
    expect(parentOf(activity)).toBe(scheduled.spanID);
    expect(parentOf(submit)).toBe(activity.spanID);
    expect([request, start].map(serviceOf)).toEqual(['herald-api', 'herald-api']);
    expect([run, activity, submit].map(serviceOf)).toEqual([
      'herald-worker',
      'herald-worker',
      'herald-worker',
    ]);
    expect(submit.tags).toEqual(
      expect.arrayContaining([
        { key: 'herald.provider', type: 'string', value: 'own' },
        { key: 'herald.submission.outcome', type: 'string', value: 'accepted' },
      ]),
    );
    expect(request.tags).toEqual(
      expect.arrayContaining([
        { key: 'http.route', type: 'string', value: '/api/v1/messages' },
        { key: 'http.response.status_code', type: 'int64', value: 202 },
      ]),
    );
    // Ids, names and outcomes only: neither the number nor the text reached the collector.
    expect(JSON.stringify(trace)).not.toContain(recipient.slice(1));
    expect(JSON.stringify(trace)).not.toContain(body);

    // The simulator's delivery receipt, as the api's span of its webhook request.
    const receiptOperation = encodeURIComponent('POST /webhooks/providers/:provider');
    const receipt = await traceWhere(
      `service=herald-api&operation=${receiptOperation}&limit=20`,
      () => true,
    );
    expect(receipt.spans[0]?.tags).toEqual(
      expect.arrayContaining([{ key: 'http.response.status_code', type: 'int64', value: 204 }]),
    );
  });

  it('logs JSON lines with their context, and no number, body or code', async () => {
    const otp = await post('/api/v1/otp/send', { recipient: otpRecipient, purpose: 'login' });
    expect(otp.status).toBe(202);
    let code = '';
    await waitUntil(
      'the OTP at the simulator',
      async () => {
        const [message] = await inbox(simulator.url, otpRecipient);
        code = /(?<!\d)(\d{6})(?!\d)/.exec(message?.body ?? '')?.[1] ?? '';
        return code || undefined;
      },
      { timeoutMs: 60_000, proc: worker },
    );
    const verified = await post('/api/v1/otp/verify', {
      recipient: otpRecipient,
      request_id: otp.body.data?.request_id,
      code,
    });
    expect(verified.status).toBe(200);
    // The OTP's send is one trace too, request to provider call, without its code.
    const otpOperation = encodeURIComponent('POST /api/v1/otp/send');
    const otpTrace = await traceWhere(
      `service=herald-api&operation=${otpOperation}&limit=20`,
      (t) => t.spans.some((span) => span.operationName === 'provider.submit'),
    );
    expect(otpTrace.spans.map((span) => span.operationName)).toEqual(
      expect.arrayContaining(['POST /api/v1/otp/send', 'RunActivity:submitOtp', 'provider.submit']),
    );
    expect(JSON.stringify(otpTrace)).not.toMatch(new RegExp(`(?<!\\d)${code}(?!\\d)`));

    // The provider refuses one message (503 unavailable): the worker says so, from its activity.
    await setBehaviour(simulator.url, { prefix: refusedRecipient, outcome: 'fail' });
    const refused = await post('/api/v1/messages', {
      recipients: [refusedRecipient],
      message: refusedBody,
    });
    expect(refused.status).toBe(202);
    const warning = await waitUntil(
      'the worker’s warning of the refused submission',
      async () =>
        workerLines().find((line) => line.msg === 'Provider submission did not go through'),
      { timeoutMs: 60_000, proc: worker },
    );
    expect(warning).toMatchObject({
      level: 40,
      provider: 'own',
      outcome: 'failed',
      activityType: 'submitChunk',
      attempt: 1,
      workflowId: expect.stringMatching(/^campaign\//),
      runId: expect.any(String),
      trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(typeof warning.time).toBe('number');

    // Every api line is JSON with its request's id and trace id.
    const apiLines = jsonLines(api?.stdout() ?? '');
    const requestLines = apiLines.filter((line) => line.reqId !== undefined);
    expect(requestLines.length).toBeGreaterThan(6);
    for (const line of requestLines)
      expect(line).toMatchObject({ trace_id: expect.stringMatching(/^[0-9a-f]{32}$/) });

    const everything = [api?.stdout(), api?.stderr(), worker?.stdout(), worker?.stderr()].join(
      '\n',
    );
    const sentDigits = [recipient, otpRecipient, refusedRecipient, code].map((digits) =>
      digits.replace(/^\+/, ''),
    );
    const found = [
      ...sentDigits.filter((digits) => new RegExp(`(?<!\\d)${digits}(?!\\d)`).test(everything)),
      ...[body, refusedBody].filter((text) => everything.includes(text)),
    ];
    expect(found).toEqual([]);
  });

  function workerLines() {
    return jsonLines(worker?.stderr() ?? '');
  }
});

/** The lines of a log that are JSON objects (the launcher's start-up lines are plain text). */
function jsonLines(log: string): Record<string, unknown>[] {
  return log.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    return [JSON.parse(line) as Record<string, unknown>];
  });
}

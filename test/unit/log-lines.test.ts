import { describe, expect, it } from 'vitest';
import { parseEnv, tracingOf } from '../../config/env.js';
import { jsonLogLine, withoutPhoneNumbers } from '../../telemetry/log-lines.js';

describe('the worker’s JSON log lines', () => {
  it('writes one pino-shaped object a line, with Temporal’s context fields and errors readable', () => {
    const error = new Error('connect ECONNREFUSED 127.0.0.1:4010');
    const line = jsonLogLine({
      level: 'WARN',
      message: 'Provider submission did not go through',
      meta: {
        workflowId: 'campaign/1/k',
        runId: 'r',
        activityType: 'submitChunk',
        attempt: 2,
        error,
      },
      timestampNanos: 1_764_220_000_123_456_789n,
    });
    expect(line.endsWith('}\n')).toBe(true);
    expect(line.split('\n')).toHaveLength(2);
    expect(JSON.parse(line)).toEqual({
      level: 40,
      time: 1_764_220_000_123,
      pid: process.pid,
      hostname: expect.any(String),
      runId: 'r',
      workflowId: 'campaign/1/k',
      activityType: 'submitChunk',
      attempt: 2,
      error: { type: 'Error', message: error.message, stack: error.stack },
      msg: 'Provider submission did not go through',
    });
  });

  it('masks phone numbers in a provider’s answer', () => {
    expect(withoutPhoneNumbers("The 'To' number +15005550001 is not valid (code 21211)")).toBe(
      "The 'To' number [number] is not valid (code 21211)",
    );
  });
});

describe('tracing settings', () => {
  it('is off without an OTLP endpoint', () => {
    expect(tracingOf(parseEnv({}), 'herald-api')).toBeNull();
  });

  it('sends to the traces endpoint, or the general one’s /v1/traces, under the role’s name', () => {
    expect(
      tracingOf(parseEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }), 'herald-api'),
    ).toEqual({ tracesUrl: 'http://collector:4318/v1/traces', serviceName: 'herald-api' });
    expect(
      tracingOf(
        parseEnv({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
          OTEL_SERVICE_NAME: 'sms-worker',
        }),
        'herald-worker',
      ),
    ).toEqual({ tracesUrl: 'http://traces:4318/custom', serviceName: 'sms-worker' });
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    expect(() => parseEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      'Invalid environment:\n  OTEL_EXPORTER_OTLP_ENDPOINT: must be an http(s) URL',
    );
  });
});

import { hostname } from 'node:os';

/*
 * The worker's log lines (docs/operations.md, "Logs"): one JSON object a line, in the shape the api's pino
 * writes (numeric `level`, `time` in epoch ms, `pid`, `hostname`, `msg`), so one log pipeline
 * reads both. Temporal's loggers add their context as fields: on a line from an activity
 * workflowId, runId, activityType, attempt (and trace_id when tracing is on); on a workflow's,
 * workflowId and runId.
 */

/** pino's numbers for Temporal's level names. */
const LEVELS: Record<string, number> = { TRACE: 10, DEBUG: 20, INFO: 30, WARN: 40, ERROR: 50 };

const HOST = hostname();

export interface LogRecord {
  level: string;
  message: string;
  meta?: Record<string, unknown>;
  timestampNanos: bigint;
}

/** One JSON line (with its newline) for a Temporal log entry. */
export function jsonLogLine({ level, message, meta, timestampNanos }: LogRecord): string {
  // An activity's run id under the name a workflow's lines use; its task token is noise.
  const { workflowRunId, taskToken: _, ...context } = meta ?? {};
  const fields = {
    level: LEVELS[level] ?? 30,
    time: Number(timestampNanos / 1_000_000n),
    pid: process.pid,
    hostname: HOST,
    ...(workflowRunId === undefined ? {} : { runId: workflowRunId }),
    ...context,
    msg: message,
  };
  return `${JSON.stringify(fields, serializable)}\n`;
}

/** An error's type, message and stack (JSON.stringify would write `{}`); bigints as numbers. */
function serializable(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Error) {
    const { name, message, stack } = value;
    const cause = (value as { cause?: unknown }).cause;
    return { type: name, message, stack, ...(cause === undefined ? {} : { cause }) };
  }
  return value;
}

/**
 * `text` with anything shaped like a phone number (6 digits or more in a row, a `+` kept out)
 * replaced: a provider's answer may quote the recipient's number ("The 'To' number +1… is not
 * valid"), and a log line must not hold one.
 */
export function withoutPhoneNumbers(text: string): string {
  return text.replace(/\+?\d{6,}/g, '[number]');
}

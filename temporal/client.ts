import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { tracingEnabled } from '../telemetry/tracing.js';

export async function connectTemporalClient(
  address: string,
  namespace: string,
  options: { connectTimeoutMs?: number } = {},
): Promise<Client> {
  const connection = await Connection.connect({
    address,
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeout: options.connectTimeoutMs }),
  });
  return new Client({ connection, namespace, interceptors: { workflow: tracedWorkflowCalls() } });
}

/**
 * With tracing on (telemetry/tracing.ts), a workflow start is a span of its caller's trace, and
 * carries that trace to the workflow in its headers; none otherwise.
 */
export function tracedWorkflowCalls(): WorkflowClientInterceptor[] {
  return tracingEnabled() ? [new OpenTelemetryWorkflowClientInterceptor()] : [];
}

import {
  Client,
  Connection,
  type ConnectionLike,
  type WorkflowClientInterceptor,
} from '@temporalio/client';
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

/** Clients that share their connection with a worker of this process (colocatedClient). */
const colocated = new WeakSet<Client>();

/**
 * A client on a worker's own NativeConnection: a run it starts can be started eagerly, its first
 * workflow task handed straight to that worker in the start's answer instead of through a poll.
 */
export function colocatedClient(connection: ConnectionLike, namespace: string): Client {
  const client = new Client({
    connection,
    namespace,
    interceptors: { workflow: tracedWorkflowCalls() },
  });
  colocated.add(client);
  return client;
}

/** Whether runs started through `client` may ask for an eager start (a worker is beside it). */
export const startsEagerly = (client: Client) => colocated.has(client);

/**
 * With tracing on (telemetry/tracing.ts), a workflow start is a span of its caller's trace, and
 * carries that trace to the workflow in its headers; none otherwise.
 */
export function tracedWorkflowCalls(): WorkflowClientInterceptor[] {
  return tracingEnabled() ? [new OpenTelemetryWorkflowClientInterceptor()] : [];
}

import { createRequire } from 'node:module';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';
import { activeTracing } from '../telemetry/tracing.js';

/*
 * With tracing on (telemetry/tracing.ts), the worker's part of a send's trace: a span per workflow
 * run (and per activity it schedules) inside the sandbox, exported through a sink since workflow
 * code cannot do I/O, and a span per activity execution, child of the workflow's, active while
 * the activity runs (so its provider call is a child, and its log lines carry the trace_id).
 * Off, the bundle and the workers are exactly what they were.
 */

/** Temporal's workflow interceptors module, bundled beside the workflows when tracing is on. */
export function tracingWorkflowModules(): string[] {
  if (!activeTracing()) return [];
  const require = createRequire(import.meta.url);
  return [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];
}

/** The interceptors and sinks every Worker.create gets. */
export function tracingWorkerOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const tracing = activeTracing();
  if (!tracing) return {};
  return {
    interceptors: {
      activity: [
        (context) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(context),
          outbound: new OpenTelemetryActivityOutboundInterceptor(context),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

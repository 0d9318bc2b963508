import {
  type Attributes,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/*
 * OpenTelemetry tracing (docs/operations.md, "Tracing"): off unless an OTLP endpoint is configured
 * (config/env.ts tracingOf). Installed once per process, globally, so that Temporal's interceptors
 * (@temporalio/interceptors-opentelemetry), the api's request spans and Herald's own spans all
 * use the same provider, context (AsyncLocalStorage) and W3C trace-context propagation.
 * Spans carry ids, names and outcomes: never a phone number, a message body, a code or a URL's
 * path or query (a path may hold an opt-out or invitation token).
 */

export interface Tracing {
  /** What the worker hands Temporal's workflow span exporter (the workflow sandbox cannot export). */
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

let installed: Tracing | null = null;

/** Installs tracing for this process when `settings` is given (idempotent); null when off. */
export function startTracing(
  settings: { tracesUrl: string; serviceName: string } | null,
): Tracing | null {
  if (installed || !settings) return installed;
  const resource = Resource.default().merge(new Resource({ 'service.name': settings.serviceName }));
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  installed = { resource, spanProcessor, shutdown: () => provider.shutdown() };
  return installed;
}

/** The installed tracing, or null when this process does not trace. */
export function activeTracing(): Tracing | null {
  return installed;
}

const tracer = () => trace.getTracer('herald');

/** The trace id of the span active here, for log lines; undefined when there is none. */
export function currentTraceId(): string | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

/** The trace id a span belongs to, when it is a real (recorded or propagated) one. */
export function traceIdOf(span: Span): string | undefined {
  const spanContext = span.spanContext();
  return isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

/**
 * Runs `work` inside a new span, active for everything it awaits; the span ends with it, an
 * error recorded by its name only (an error's message may quote a provider's answer).
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.name });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * An incoming HTTP request's server span, child of the caller's `traceparent` if it sent one.
 * Its name and route are set when the response is known (endHttpServerSpan).
 */
export function startHttpServerSpan(
  method: string,
  headers: Record<string, string | string[] | undefined>,
): Span {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  return tracer().startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
    parent,
  );
}

export function endHttpServerSpan(
  span: Span,
  method: string,
  route: string | undefined,
  statusCode: number,
): void {
  if (route) {
    span.updateName(`${method} ${route}`);
    span.setAttribute('http.route', route);
  }
  span.setAttribute('http.response.status_code', statusCode);
  if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Runs `work` (and all it schedules) with `span` as the active span. */
export function withActiveSpan<T>(span: Span, work: () => T): T {
  return context.with(trace.setSpan(context.active(), span), work);
}

/** Whether this process traces (spans are worth starting). */
export function tracingEnabled(): boolean {
  return installed !== null;
}

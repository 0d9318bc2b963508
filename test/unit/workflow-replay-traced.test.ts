/**
 * Tracing (issue 26, item 2) adds Temporal's OpenTelemetry workflow interceptors to the bundle of
 * a worker that traces: every recorded history (test/fixtures/*.history.json) must still replay
 * with them, or turning tracing on would break the runs in flight.
 */
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import proto from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { expect, it } from 'vitest';

const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));
const FIXTURES = new URL('../fixtures/', import.meta.url);
const { History } = proto.temporal.api.history.v1;

it('replays every recorded history with the tracing interceptors in the bundle', {
  timeout: 180_000,
}, async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const files = (await readdir(FIXTURES)).filter((file) => file.endsWith('.history.json')).sort();
  const histories = await Promise.all(
    files.map(async (file) => {
      const history = History.fromObject(
        JSON.parse(await readFile(new URL(file, FIXTURES), 'utf8')),
      );
      const started = history.events[0]?.workflowExecutionStartedEventAttributes;
      return { workflowId: started?.workflowId || file, history };
    }),
  );
  const interceptorsModule = createRequire(import.meta.url).resolve(
    '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
  );
  const exporter = new InMemorySpanExporter();
  const results = Worker.runReplayHistories(
    {
      workflowsPath,
      interceptors: { workflowModules: [interceptorsModule] },
      sinks: {
        exporter: makeWorkflowExporter(
          new SimpleSpanProcessor(exporter),
          new Resource({ 'service.name': 'herald-replay' }),
        ),
      },
    },
    histories,
  );
  const failures: string[] = [];
  let replayed = 0;
  for await (const result of results) {
    replayed++;
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  expect(failures).toEqual([]);
  expect(replayed).toBe(files.length);
});

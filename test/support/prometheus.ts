import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../cli/embedded/ports.js';

/**
 * A real Prometheus (Debian's `prometheus`, installed by scripts/test-prerequisites.sh) scraping
 * Herald's metrics targets every second with Herald's alert rules (deploy/prometheus/alerts.yml):
 * for the metrics test and the benchmarks.
 */
export interface RunningPrometheus {
  url: string;
  // biome-ignore lint/suspicious/noExplicitAny: Prometheus's API answers, read field by field
  get(path: string, params?: Record<string, string>): Promise<any>;
  /** The result vector of an instant query. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

const RULES = fileURLToPath(new URL('../../deploy/prometheus/alerts.yml', import.meta.url));

export async function startPrometheus(targets: string[]): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'herald-prometheus-'));
  const port = await freePort();
  await writeFile(
    join(dir, 'prometheus.yml'),
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [RULES],
      scrape_configs: [{ job_name: 'herald', static_configs: [{ targets }] }],
    }),
  );
  const child = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  const get: RunningPrometheus['get'] = async (path, params = {}) => {
    const response = await fetch(`${url}${path}?${new URLSearchParams(params)}`);
    return response.json();
  };
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`Prometheus did not become ready on ${url}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    get,
    query: async (expr) => (await get('/api/v1/query', { query: expr })).data.result,
    stop,
  };
}

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * deploy/prometheus: the alert rules pass `promtool check rules` (Debian's `prometheus` package,
 * installed by scripts/test-prerequisites.sh), and `promtool test rules` proves each alert fires
 * on the series that should fire it and stays quiet on healthy ones (alerts.test.yml). The rules
 * and the Grafana dashboard are evaluated against a running Herald in test/e2e/metrics.
 */
const run = promisify(execFile);
const rulesDir = fileURLToPath(new URL('../../deploy/prometheus/', import.meta.url));

describe('Prometheus alert rules', () => {
  it('pass promtool check rules', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', 'alerts.yml'], { cwd: rulesDir });
    expect(stdout).toContain('SUCCESS: 10 rules found');
  });

  it('fire, and stay quiet, as alerts.test.yml expects', async () => {
    const { stdout } = await run('promtool', ['test', 'rules', 'alerts.test.yml'], {
      cwd: rulesDir,
    });
    expect(stdout).toMatch(/Unit Testing: {2}alerts\.test\.yml\s+SUCCESS/);
  });

  it('refuse a rule whose expression does not parse, with promtool’s own error', async () => {
    const broken = readFileSync(`${rulesDir}alerts.yml`, 'utf8').replace(
      'max(herald_campaign_backlog_oldest_seconds) > 900',
      'max(herald_campaign_backlog_oldest_seconds > 900',
    );
    const dir = mkdtempSync(join(tmpdir(), 'herald-rules-'));
    writeFileSync(join(dir, 'alerts.yml'), broken);
    const failure = await run('promtool', ['check', 'rules', 'alerts.yml'], { cwd: dir }).then(
      () => 'passed',
      (error: { stdout: string; stderr: string }) => `${error.stdout}${error.stderr}`,
    );
    rmSync(dir, { recursive: true });
    expect(failure).toContain('unclosed left parenthesis');
  });
});

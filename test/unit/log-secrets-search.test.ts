import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findSecretsInLogDirectory } from '../support/log-secrets.js';

/** The helper the chaos run and the log test search logs with (test/support/log-secrets.ts). */
describe('findSecretsInLogDirectory', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('finds each secret in any form, in every file at any depth, and no chance digits', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'log-secrets-'));
    dirs.push(dir);
    await mkdir(join(dir, 'api-1'));
    await writeFile(
      join(dir, 'api-1', 'stdout.log'),
      [
        '{"msg":"incoming request","url":"/o/Ab3dE6gH9k"}',
        '{"msg":"request completed","responseTime":3.123456,"remotePort":51234}',
        '{"msg":"sign-in","body":"password=correct+horse+1"}',
      ].join('\n'),
    );
    await writeFile(join(dir, 'worker.log'), 'code "123456" sent\nJSON: "pass \\"word\\""\n');
    const found = await findSecretsInLogDirectory(dir, [
      { kind: 'opt-out token', value: 'Ab3dE6gH9k' },
      { kind: 'password', value: 'correct horse 1' },
      { kind: 'OTP code', value: '123456' },
      { kind: 'quoted password', value: 'pass "word"' },
      { kind: 'API key', value: 'hld_absent' },
    ]);
    expect(found).toEqual([
      {
        kind: 'opt-out token',
        file: join(dir, 'api-1', 'stdout.log'),
        line: 1,
        excerpt: '{"msg":"incoming request","url":"/o/<opt-out token>"}',
      },
      {
        kind: 'password',
        file: join(dir, 'api-1', 'stdout.log'),
        line: 3,
        excerpt: '{"msg":"sign-in","body":"password=<password>"}',
      },
      {
        kind: 'OTP code',
        file: join(dir, 'worker.log'),
        line: 1,
        excerpt: 'code "<OTP code>" sent',
      },
      {
        kind: 'quoted password',
        file: join(dir, 'worker.log'),
        line: 2,
        excerpt: 'JSON: "<quoted password>"',
      },
    ]);
  });
});

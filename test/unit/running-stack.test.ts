import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findRunningStack, stackFileOf, writeStackFile } from '../../cli/running-stack.js';

describe('the stack file of a running `herald start`', () => {
  let dataDir: string;
  const stack = {
    pid: process.pid,
    publicUrl: 'http://127.0.0.1:3100',
    temporalAddress: '127.0.0.1:7300',
    temporalNamespace: 'default',
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'herald-stack-file-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('is read while its launcher runs, and gone once removed', async () => {
    const remove = await writeStackFile(dataDir, stack);
    expect(await findRunningStack(dataDir)).toEqual(stack);
    await remove();
    expect(await findRunningStack(dataDir)).toBeUndefined();
  });

  it('is ignored when its launcher died without removing it', async () => {
    // The pid of a process that has exited.
    const { pid } = spawnSync(process.execPath, ['-e', '']);
    await writeStackFile(dataDir, { ...stack, pid });
    expect(await findRunningStack(dataDir)).toBeUndefined();
  });

  it('is ignored when it is not what a launcher writes', async () => {
    await writeFile(stackFileOf(dataDir), '{"pid": 1}');
    expect(await findRunningStack(dataDir)).toBeUndefined();
    await writeFile(stackFileOf(dataDir), 'not json');
    expect(await findRunningStack(dataDir)).toBeUndefined();
  });
});

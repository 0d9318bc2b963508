import { describe, expect, it } from 'vitest';
import {
  createHashingGate,
  hashPassword,
  PasswordHashingBusyError,
  verifyPassword,
} from '../../security/password.js';

describe('the password hashing gate', () => {
  it('runs at most `concurrency` tasks at once, queues `maxWaiting` in order and refuses the rest', async () => {
    const gate = createHashingGate(2, 3);
    let running = 0;
    let mostAtOnce = 0;
    const started: number[] = [];
    const finish: (() => void)[] = [];
    const task = (id: number) => () =>
      new Promise<number>((resolve) => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        started.push(id);
        finish[id] = () => {
          running -= 1;
          resolve(id);
        };
      });
    const admitted = [1, 2, 3, 4, 5].map((id) => gate.run(task(id)));
    await expect(gate.run(task(6))).rejects.toBeInstanceOf(PasswordHashingBusyError);
    await Promise.resolve();
    expect(started).toEqual([1, 2]);
    for (const id of [1, 2, 3, 4, 5]) {
      await new Promise((resolve) => setImmediate(resolve));
      finish[id]?.();
    }
    expect(await Promise.all(admitted)).toEqual([1, 2, 3, 4, 5]);
    expect(started).toEqual([1, 2, 3, 4, 5]);
    expect(mostAtOnce).toBe(2);
    // Once the queue drained, a task is admitted again.
    await expect(gate.run(async () => 'again')).resolves.toBe('again');
  });

  it('queues a task that may not be refused however many wait (hashing a new password)', async () => {
    const gate = createHashingGate(1, 0);
    let release = () => {};
    const first = gate.run(
      () => new Promise<string>((resolve) => (release = () => resolve('first'))),
    );
    await expect(gate.run(async () => 'refused')).rejects.toBeInstanceOf(PasswordHashingBusyError);
    const queued = gate.run(async () => 'queued', { queueAnyway: true });
    release();
    expect(await Promise.all([first, queued])).toEqual(['first', 'queued']);
  });

  it('frees the slot of a task that failed', async () => {
    const gate = createHashingGate(1, 0);
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(gate.run(async () => 'next')).resolves.toBe('next');
  });

  it('still hashes and verifies through the process-wide gate', async () => {
    const stored = await hashPassword('correct horse battery');
    const checks = await Promise.all([
      verifyPassword('correct horse battery', stored),
      verifyPassword('wrong', stored),
    ]);
    expect(checks).toEqual([true, false]);
  });
});

import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { TemporalDeadlineExpired, withinDeadline } from '../../temporal/deadline.js';

/** A client whose gRPC deadline is ignored, as a connection retrying with backoff behaves. */
const overshootingClient = {
  withDeadline: <T>(_deadline: number, call: () => Promise<T>) => call(),
} as unknown as Client;

describe('withinDeadline', () => {
  it('stops waiting at the deadline although the call itself has not given up', async () => {
    const started = Date.now();
    const never = () => new Promise<never>(() => {});
    await expect(withinDeadline(overshootingClient, started + 200, never)).rejects.toBeInstanceOf(
      TemporalDeadlineExpired,
    );
    expect(Date.now() - started).toBeLessThan(400);
  });

  it('answers with the call when it comes first', async () => {
    await expect(
      withinDeadline(overshootingClient, Date.now() + 1_000, async () => 'started'),
    ).resolves.toBe('started');
  });
});

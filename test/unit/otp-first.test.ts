import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_BATCH_WAIT_MS, OtpFirst } from '../../activities/otp-first.js';

/** Whether `promise` has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

/** A code submission that lasts until the test ends it. */
function codeInFlight(gate: OtpFirst, outcome: 'accepted' | Error = 'accepted') {
  let end = () => {};
  const submission = gate.submittingCode(
    () =>
      new Promise<string>((resolve, reject) => {
        end = () => (outcome instanceof Error ? reject(outcome) : resolve(outcome));
      }),
  );
  return { submission, end: () => end() };
}

describe('OtpFirst', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets a campaign batch start at once when no code is in flight', async () => {
    vi.useFakeTimers();
    expect(await settled(new OtpFirst().beforeCampaignBatch())).toBe(true);
  });

  it('holds a batch back until the code in flight is submitted', async () => {
    vi.useFakeTimers();
    const gate = new OtpFirst();
    const code = codeInFlight(gate);
    const batch = gate.beforeCampaignBatch();
    await vi.advanceTimersByTimeAsync(MAX_BATCH_WAIT_MS / 2);
    expect(await settled(batch)).toBe(false);
    code.end();
    expect(await code.submission).toBe('accepted');
    expect(await settled(batch)).toBe(true);
  });

  it('holds a batch back no longer than MAX_BATCH_WAIT_MS', async () => {
    vi.useFakeTimers();
    const gate = new OtpFirst();
    const code = codeInFlight(gate);
    const batch = gate.beforeCampaignBatch();
    await vi.advanceTimersByTimeAsync(MAX_BATCH_WAIT_MS - 1);
    expect(await settled(batch)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(batch)).toBe(true);
    code.end();
    await code.submission;
  });

  it('waits for every code in flight, and a failed submission releases too', async () => {
    vi.useFakeTimers();
    const gate = new OtpFirst();
    const failing = codeInFlight(gate, new Error('provider down'));
    const other = codeInFlight(gate);
    const batch = gate.beforeCampaignBatch();
    failing.end();
    await expect(failing.submission).rejects.toThrow('provider down');
    expect(await settled(batch)).toBe(false);
    other.end();
    await other.submission;
    expect(await settled(batch)).toBe(true);
    expect(await settled(gate.beforeCampaignBatch())).toBe(true);
  });
});

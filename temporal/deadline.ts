import type { Client } from '@temporalio/client';

export class TemporalDeadlineExpired extends Error {
  constructor() {
    super('Temporal did not answer before the deadline');
  }
}

/**
 * Runs a Temporal call under a gRPC deadline and stops waiting at that deadline. The gRPC
 * deadline alone can overshoot by its connection retries' backoff (seconds on a loaded machine);
 * a caller that must answer by a time cannot afford that. The call may still land afterwards, so
 * its outcome is unknown to the caller, which is why every start here is idempotent by id.
 */
export async function withinDeadline<T>(
  client: Client,
  deadline: number,
  call: () => Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TemporalDeadlineExpired()),
      Math.max(0, deadline - Date.now()),
    );
  });
  const attempt = client.withDeadline(deadline, call);
  attempt.catch(() => {}); // a late failure after the deadline answered has nobody to tell
  try {
    return await Promise.race([attempt, expired]);
  } finally {
    clearTimeout(timer);
  }
}

import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';

/**
 * Passwords are hashed with scrypt (memory-hard, built into Node), stored as a PHC string.
 * ln=15, r=8 uses 32 MiB per hash: OWASP's recommended minimum for scrypt is 2^17 with 8 MiB-ish
 * variants; 2^15·8 keeps sign-in under ~100 ms on two cores while staying memory-hard.
 */
const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const MAX_MEMORY = 256 * 1024 * 1024;

/** More password checks are waiting than the process takes: the caller answers 503. */
export class PasswordHashingBusyError extends Error {
  override name = 'PasswordHashingBusyError';
  constructor() {
    super('Too many password checks are waiting.');
  }
}

export interface HashingGate {
  /** `queueAnyway`: wait however many wait (an operator's command, not anonymous input). */
  run<T>(task: () => Promise<T>, options?: { queueAnyway?: boolean }): Promise<T>;
}

/**
 * At most `concurrency` tasks at once, the next `maxWaiting` queued in order, any more refused
 * with PasswordHashingBusyError at once (they would only wait past the request's deadline).
 */
export function createHashingGate(concurrency: number, maxWaiting: number): HashingGate {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(task, options = {}) {
      if (running < concurrency) running += 1;
      else if (waiting.length >= maxWaiting && !options.queueAnyway) {
        throw new PasswordHashingBusyError();
      } else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        // A waiter takes over this slot; with none waiting, the slot is free.
        const next = waiting.shift();
        if (next) next();
        else running -= 1;
      }
    },
  };
}

/**
 * scrypt runs on libuv's thread pool (4 threads) and takes 32 MiB each: unbounded, 16 sign-ins at
 * once held every thread (a file read waited 1.4-2.8 s behind them; DNS lookups share that pool)
 * and up to 16 × 32 MiB.
 * Half the cores hash at once, leaving the event loop a core and the pool free threads; 32 more
 * wait (about 3 s of hashing on one core, inside the 4.5 s request deadline).
 */
const gate = createHashingGate(Math.max(1, Math.floor(availableParallelism() / 2)), 32);

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  // Hashing a new password is an operator's or a signed-in user's act: it waits its turn.
  const hash = await gate.run(
    () =>
      scryptAsync(password, salt, KEY_LENGTH, { N: 2 ** LOG_N, r: R, p: P, maxmem: MAX_MEMORY }),
    { queueAnyway: true },
  );
  return `$scrypt$ln=${LOG_N},r=${R},p=${P}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([^$]+)\$([^$]+)$/.exec(stored);
  if (!match) return false;
  const [, logN, r, p, salt, hash] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const expected = Buffer.from(hash, 'base64');
  const actual = await gate.run(() =>
    scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
      N: 2 ** Number(logN),
      r: Number(r),
      p: Number(p),
      maxmem: MAX_MEMORY,
    }),
  );
  return timingSafeEqual(actual, expected);
}

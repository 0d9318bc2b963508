/**
 * Who asks a use-case to change something. Every state-changing use-case takes one and writes
 * its audit line (commands/audit.ts `writeAudit`) in the same transaction as the change, so
 * the log holds a line for every change and no line for a change that did not happen.
 */
export type Actor =
  /** A console member: the signed-in user, from the browser's address. */
  | { kind: 'member'; userId: number; email: string; address: string; userAgent: string | null }
  /** The `herald` command: the OS user who ran it, on which host. */
  | { kind: 'operator'; user: string; host: string }
  /** A REST call: the API key that made it (by its public prefix), from the caller's address. */
  | { kind: 'api_key'; keyId: number; prefix: string; address: string | null };

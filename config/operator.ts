import { hostname, userInfo } from 'node:os';

/**
 * Who runs a CLI command, and on which machine, for the audit log: the OS user's name (USER or
 * LOGNAME when the system has none for the uid, as in a container run with an arbitrary uid) and
 * the host name.
 */
export function operatorIdentity(): { user: string; host: string } {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for the uid.
  }
  return {
    user: user || process.env.USER || process.env.LOGNAME || 'unknown',
    host: hostname() || 'unknown',
  };
}

import type { ConsoleDeps } from './deps.js';
import type { CookieOptions } from './session.js';

/** What every route module of the console is given. */
export interface ConsoleContext {
  deps: ConsoleDeps;
  cookies: CookieOptions;
  secondFactor: {
    /** Whether the user has a confirmed TOTP factor (sign-in then asks for a code). */
    enrolled(userId: number): Promise<boolean>;
  };
}

/**
 * The environment a child process the launcher starts (Postgres, a Temporal server, a Herald
 * role) inherits, with overrides. Beside env.ts the one reader of `process.env`: everything else
 * gets its settings parsed, from config/.
 */
export function childEnvironment(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...overrides };
}

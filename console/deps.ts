import type { CommandDeps } from '../commands/deps.js';

/** The console calls the use-cases, so it needs exactly what they need. */
export type ConsoleDeps = CommandDeps;

import type { CommandDeps } from '../commands/deps.js';

/** What the api needs: exactly what the use-cases it calls need. */
export type ApiDeps = CommandDeps;

/**
 * Every admin command is either recorded in the audit log (cli/audit.ts names its action) or
 * declared read-only: a new command without a line there fails here.
 */
import { describe, expect, it } from 'vitest';
import { AUDITED_COMMANDS, READ_ONLY_COMMANDS } from '../../cli/audit.js';
import { ADMIN_COMMANDS } from '../../cli/commands/index.js';

describe('CLI audit coverage', () => {
  it('names every admin command once, as audited or read-only, and no other', () => {
    const names = ADMIN_COMMANDS.map((command) => command.name);
    const undeclared = names.filter(
      (name) => AUDITED_COMMANDS.has(name) === READ_ONLY_COMMANDS.has(name),
    );
    expect(undeclared).toEqual([]);
    const stale = [...AUDITED_COMMANDS, ...READ_ONLY_COMMANDS].filter(
      (name) => !names.includes(name),
    );
    expect(stale).toEqual([]);
  });
});

/**
 * Every admin command is either recorded in the audit log (cli/audit.ts names its action) or
 * declared read-only: a new command without a line there fails here.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_COMMANDS } from '../../cli/admin/index.js';
import {
  AUDITED_BY_USE_CASE,
  AUDITED_COMMANDS,
  type AuditInput,
  auditLinesOf,
  READ_ONLY_COMMANDS,
} from '../../cli/audit.js';

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

const record = (target: string) => ({ workspaceId: 7, target });

/** Each audited command's run: its options and what it prints (with its facts), as it runs. */
/** The commands the dispatcher records (the others' use-cases write their own lines). */
const RECORDED_HERE = [...AUDITED_COMMANDS].filter((name) => !AUDITED_BY_USE_CASE.has(name));

const RUNS: Record<string, AuditInput> = {
  'provider create': {
    options: { workspace: 'acme', slug: 'tw', type: 'twilio' },
    output: { id: 2, slug: 'tw' },
  },
  'provider enable': {
    options: { workspace: 'acme', slug: 'tw' },
    output: { slug: 'tw', active: true },
  },
  'provider disable': {
    options: { workspace: 'acme', slug: 'tw' },
    output: { slug: 'tw', active: false },
  },
  'route create': {
    options: { workspace: 'acme', slug: 'backup', providers: 'tw,sim' },
    output: { id: 4, slug: 'backup', providers: ['tw', 'sim'] },
  },
};

describe('CLI audit lines', () => {
  it('has a realistic run of every audited command', () => {
    expect(Object.keys(RUNS).sort()).toEqual(RECORDED_HERE.sort());
  });

  it.each(RECORDED_HERE)('%s records a named target and no blank value', (name) => {
    const lines = auditLinesOf(name, RUNS[name] as AuditInput);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line.action).toMatch(/^[a-z_]+\.[a-z_]+$/);
      expect(line.target).toMatch(/\S+ \S/);
      expect(line.target).not.toMatch(/undefined|null|\(\)|#$| $/);
      for (const value of Object.values(line.details)) expect(value).not.toBe('');
    }
  });



});

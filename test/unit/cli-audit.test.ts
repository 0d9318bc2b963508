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
  'guard set': {
    options: { workspace: 'acme', 'otp-per-recipient': '3/15m', countries: 'AU,NZ', json: true },
    output: { workspace: 'acme', otp_service: null, otp_per_recipient: '3/15m' },
  },
  'guard unblock': {
    options: { workspace: 'acme', range: '+6141999' },
    output: { workspace: 'acme', range: '+6141999', lifted: 1 },
  },
  'recipient erase': {
    options: { number: '+61412345678', workspace: 'acme' },
    output: {
      recipient: '•••• 5678',
      workspace: 'acme',
      erased: true,
      campaign_messages: 2,
      otp_requests: 1,
      otp_verification_failures: 0,
      opt_outs_hashed: 1,
      opt_out_links: 1,
      webhook_events: 0,
      idempotency_records: 1,
      audit_entries: 0,
      texts: 0,
    },
  },
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
  'credits add': { options: { workspace: 'acme', amount: '100' }, output: { balance: 150 } },
  'otp-service create': {
    options: { workspace: 'acme', name: 'Login' },
    output: { id: 1, slug: 'login', name: 'Login' },
  },
  'otp-service update': {
    options: { workspace: 'acme', slug: 'login', name: 'Sign-in' },
    output: { id: 1, slug: 'login', name: 'Sign-in' },
  },
  'otp-service delete': {
    options: { workspace: 'acme', slug: 'login' },
    output: { slug: 'login', deleted: true },
  },
  'template create': {
    options: { workspace: 'acme', slug: 'code', body: 'Your code is {code}' },
    output: { id: 9, slug: 'code', purpose: 'transactional' },
  },
  'template update': {
    options: { workspace: 'acme', slug: 'code', enabled: 'false' },
    output: { id: 9, slug: 'code', purpose: 'transactional', enabled: false },
  },
  'template delete': {
    options: { workspace: 'acme', slug: 'code' },
    output: { slug: 'code', deleted: true },
  },
  'sender create': {
    options: { workspace: 'acme', provider: ' sim ', sender: ' Acme ', pending: true },
    output: { id: 11 },
  },
  'sender delete': {
    options: { workspace: 'acme', id: '11' },
    output: { id: 11, sender: 'Acme', provider_slug: 'sim', deleted: true },
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

  it('fails the line, never blanks it, when a field it names is missing from the output', () => {
    expect(() =>
      auditLinesOf('template create', { options: {}, output: { id: 9, purpose: 'marketing' } }),
    ).toThrow('the output\'s "slug" is missing');
    expect(() =>
      auditLinesOf('sender create', {
        options: { provider: 'sim', sender: ' ' },
        output: { id: 1 },
      }),
    ).toThrow('--sender is missing');
  });

  it("writes the console's action, target and details for the same use-case", () => {
    const lines = (name: string, run?: Partial<AuditInput>) =>
      auditLinesOf(name, { ...(RUNS[name] as AuditInput), ...run });
    expect(lines('sender create')).toEqual([
      { action: 'sender.registered', target: 'Sender Acme (sim)', details: { approved: false } },
    ]);
    expect(lines('sender delete')).toEqual([
      { action: 'sender.deleted', target: 'Sender Acme (sim)', details: {} },
    ]);
    expect(lines('template create')).toEqual([
      {
        action: 'template.created',
        target: 'Template code',
        details: { purpose: 'transactional' },
      },
    ]);
    expect(lines('template update')).toEqual([
      {
        action: 'template.updated',
        target: 'Template code',
        details: { purpose: 'transactional', enabled: false },
      },
    ]);
    expect(lines('template delete')).toEqual([
      { action: 'template.deleted', target: 'Template code', details: {} },
    ]);
  });

  it('records a guard change with the options given, on the workspace or the OTP service', () => {
    expect(auditLinesOf('guard set', RUNS['guard set'] as AuditInput)).toEqual([
      {
        action: 'guard.updated',
        target: 'workspace acme',
        details: { otp_per_recipient: '3/15m', countries: 'AU,NZ' },
      },
    ]);
    const service = '0b7a4a52-5d0e-4c36-9d1e-2f5f3c1b8a90';
    expect(
      auditLinesOf('guard set', {
        options: { workspace: 'acme', 'otp-service': service, 'range-breaker': 'off' },
        output: { workspace: 'acme', otp_service: service },
      }),
    ).toEqual([
      {
        action: 'guard.updated',
        target: `OTP service ${service}`,
        details: { range_breaker: 'off' },
      },
    ]);
    expect(auditLinesOf('guard unblock', RUNS['guard unblock'] as AuditInput)).toEqual([
      { action: 'guard.range_unblocked', target: 'range +6141999', details: { range: '+6141999' } },
    ]);
  });

  it('records an erasure with the number masked, and nothing when it changed nothing', () => {
    const run = RUNS['recipient erase'] as AuditInput;
    expect(auditLinesOf('recipient erase', run)).toEqual([
      {
        action: 'recipient.erased',
        target: 'recipient •••• 5678',
        details: {
          campaign_messages: 2,
          otp_requests: 1,
          opt_outs_hashed: 1,
          opt_out_links: 1,
          idempotency_records: 1,
        },
      },
    ]);
    const nothingLeft = { ...run, output: { recipient: '•••• 5678', erased: false } };
    expect(auditLinesOf('recipient erase', nothingLeft)).toEqual([]);
  });
});

/**
 * The audit log of the admin commands, kept by the dispatcher in one place: each state-changing
 * command is recorded once it succeeded, as the console records its actions (the same action
 * names), with the OS user who ran it as the actor, source `cli`, and `cli@<hostname>` as where
 * it came from. The entry belongs to the workspace the command acted on, so the console's Audit
 * page lists it. Option values are recorded only where named below: a password, a credential, a
 * message body or a phone number never reaches the log.
 */
import { type AuditedRecord, auditSubjectOf, recordAudit } from '../commands/audit.js';
import { findWorkspace } from '../commands/team/workspaces.js';
import { operatorIdentity } from '../config/operator.js';
import { type CommandResult, optional as given, type Options } from './admin/options.js';
import type { AdminCommand } from './admin/table.js';
import { type AdminContext, operatorActor } from './context.js';

type Details = Record<string, string | number | boolean | null>;
type Output = Record<string, unknown>;

/** One line of the log, as the console writes it for the same action. */
export interface AuditLine {
  action: string;
  target: string | null;
  details: Details;
}

/** What an entry is made of: the options, what the command printed and its facts. */
export interface AuditInput {
  options: Options;
  output: Output;
  /** The record `--id` names, as it was before the command ran. */
  record?: { workspaceId: number; target: string };
  /** The state `CommandAudit.before` read before the command ran. */
  before?: unknown;
}

interface CommandAudit {
  /**
   * The workspace acted on: its `--workspace` option (the default), the `id` of the command's
   * output (a workspace it created or updated), or the workspace of the record `--id` names,
   * looked up before the command runs (a deleted record is gone after).
   */
  workspace?: 'option' | 'output' | { record: AuditedRecord };
  /** Reads what the lines compare with, before the command changes it. */
  before?: (context: AdminContext, options: Options) => Promise<unknown>;
  /** The lines to record: one for most commands, none when nothing changed, several for some. */
  lines: (run: AuditInput) => AuditLine[];
}

/**
 * A value the line is made of: a field of the output or an option the command required. Its
 * absence is a bug (test/unit/cli-audit.test.ts), and fails the entry rather than blank it.
 */
function present(value: unknown, what: string): string {
  if (typeof value === 'number' || (typeof value === 'string' && value.trim() !== ''))
    return String(value).trim();
  throw new Error(`${what} is missing`);
}
const field = (output: Output, name: string) => present(output[name], `the output's "${name}"`);
const option = (options: Options, name: string) => present(given(options, name), `--${name}`);
const recordTarget = (run: AuditInput) => present(run.record?.target, 'the record --id names');
const joined = (output: Output, name: string) => {
  const value = output[name];
  if (!Array.isArray(value)) throw new Error(`the output's "${name}" is not a list`);
  return value.join(',');
};
/** The options given among `names`, as the operator typed them. */
const asked = (options: Options, ...names: string[]): Details =>
  Object.fromEntries(
    names.flatMap((name) => {
      const value = given(options, name);
      return value === undefined ? [] : [[name.replaceAll('-', '_'), value]];
    }),
  );
/** One line: the action, its target and details from the run. */
const line =
  (
    action: string,
    target: (run: AuditInput) => string,
    details: (run: AuditInput) => Details = () => ({}),
  ) =>
  (run: AuditInput): AuditLine[] => [{ action, target: target(run), details: details(run) }];

/**
 * Every state-changing admin command, by name. Where the console has the same action, the line
 * is the console's: its action name, target and details (console/routes/*.ts); the operator's
 * own commands (workspaces, providers, credits, ...) have no console door.
 */
const AUDITED: Record<string, CommandAudit> = {
  'provider create': {
    lines: line(
      'provider.created',
      ({ output }) => `provider ${field(output, 'slug')}`,
      ({ options }) => asked(options, 'type'),
    ),
  },
  'provider enable': {
    lines: line('provider.enabled', ({ output }) => `provider ${field(output, 'slug')}`),
  },
  'provider disable': {
    lines: line('provider.disabled', ({ output }) => `provider ${field(output, 'slug')}`),
  },
  'route create': {
    lines: line(
      'failover_route.created',
      ({ output }) => `failover route ${field(output, 'slug')}`,
      ({ output }) => ({ providers: joined(output, 'providers') }),
    ),
  },
  'webhook create': {
    lines: line(
      'webhook.created',
      ({ output }) => `webhook ${field(output, 'url')}`,
      ({ output }) => ({ events: joined(output, 'events') }),
    ),
  },
  'webhook enable': {
    workspace: { record: 'webhook_endpoint' },
    lines: line('webhook.enabled', recordTarget),
  },
  'webhook disable': {
    workspace: { record: 'webhook_endpoint' },
    lines: line('webhook.disabled', recordTarget),
  },
  'webhook delete': {
    workspace: { record: 'webhook_endpoint' },
    lines: line('webhook.deleted', recordTarget),
  },
};

/** The admin commands that change nothing, and so are not recorded. */
export const READ_ONLY_COMMANDS: ReadonlySet<string> = new Set([
  'guard show',
  'campaign recipients',
  'campaign list',
  'workspace list',
  'user list',
  'key list',
  'provider list',
  'route list',
  'otp-service list',
  'template list',
  'sender list',
  'invite list',
  'member list',
  'webhook list',
  'webhook attempts',
  'mcp connections list',
]);

/**
 * The admin commands whose use-case writes its own audit line, in the change's transaction
 * (commands/audit.ts writeAudit with operatorActor()): the dispatcher records nothing for them.
 */
export const AUDITED_BY_USE_CASE: ReadonlySet<string> = new Set<string>([
  // commands/otp, commands/messaging/templates.ts, commands/providers/senders.ts
  'otp-service create',
  'otp-service update',
  'otp-service delete',
  'template create',
  'template update',
  'template delete',
  'sender create',
  'sender delete',
  'credits add',
  // commands/fraud-guard/settings.ts, commands/messaging/recipient-erasure.ts
  'guard set',
  'guard unblock',
  'recipient erase',
  // commands/messaging/{named-campaigns,cancel-campaign}.ts
  'campaign create',
  'campaign cancel',
  'campaign resume',
  // commands/team/*, commands/operations/{rotate-secrets,after-restore}.ts
  'workspace create',
  'workspace update',
  'user create',
  'key create',
  'key rate',
  'key revoke',
  'member update',
  'member remove',
  'invite create',
  'invite revoke',
  'mcp connections revoke',
  'secrets rotate',
  'restore reconcile',
]);

export const AUDITED_COMMANDS: ReadonlySet<string> = new Set([
  ...Object.keys(AUDITED),
  ...AUDITED_BY_USE_CASE,
]);

/**
 * How a command is recorded. One that is in neither list (added without a line here) is recorded
 * by its name, so a change never goes unrecorded; test/unit/cli-audit.test.ts catches the omission.
 */
function auditOf(name: string): CommandAudit | undefined {
  if (READ_ONLY_COMMANDS.has(name) || AUDITED_BY_USE_CASE.has(name)) return undefined;
  return (
    AUDITED[name] ?? {
      lines: () => [{ action: `cli.${name.replaceAll(' ', '.')}`, target: null, details: {} }],
    }
  );
}

/** The lines a command's run records (test/unit/cli-audit.test.ts); throws what is missing. */
export function auditLinesOf(name: string, input: AuditInput): AuditLine[] {
  return auditOf(name)?.lines(input) ?? [];
}

/** The record `--id` names, before the command changes or deletes it. */
async function recordBefore(context: AdminContext, audit: CommandAudit, options: Options) {
  if (typeof audit.workspace !== 'object') return undefined;
  const id = Number(given(options, 'id'));
  if (!Number.isSafeInteger(id) || id <= 0) return undefined;
  try {
    return await auditSubjectOf(context, audit.workspace.record, id);
  } catch {
    return undefined; // The command itself reports what is wrong.
  }
}

/** What the command's lines compare with, before it changes it. */
async function stateBefore(context: AdminContext, audit: CommandAudit, options: Options) {
  try {
    return await audit.before?.(context, options);
  } catch {
    return undefined; // The command itself reports what is wrong.
  }
}

async function workspaceIdOf(
  context: AdminContext,
  audit: CommandAudit,
  options: Options,
  output: Output,
  record: { workspaceId: number } | undefined,
): Promise<number | null> {
  if (audit.workspace === 'output') return Number(output.id);
  if (typeof audit.workspace === 'object') return record?.workspaceId ?? null;
  const slug = given(options, 'workspace');
  return slug === undefined ? null : (await findWorkspace(context, slug)).id;
}

export interface AuditedRun {
  result: CommandResult;
  /** Set when the command succeeded but its entry could not be recorded. */
  warning?: string;
}

/** Runs the command and records it: a failed command, or one that changed nothing, records nothing. */
export async function runAudited(
  context: AdminContext,
  command: AdminCommand,
  options: Options,
): Promise<AuditedRun> {
  const audit = auditOf(command.name);
  const record = audit && (await recordBefore(context, audit, options));
  const before = audit && (await stateBefore(context, audit, options));
  const result = await command.run({ ...context, actor: operatorActor() }, options);
  if (!audit) return { result };
  try {
    const output = { ...result.json, ...result.facts };
    const lines = audit.lines({ options, output, record, before });
    if (lines.length === 0) return { result };
    const { user, host } = operatorIdentity();
    const workspaceId = await workspaceIdOf(context, audit, options, output, record);
    for (const { action, target, details } of lines)
      await recordAudit(context, {
        workspaceId,
        userId: null,
        actor: user,
        source: 'cli',
        action,
        target,
        details,
        address: null,
        userAgent: null,
        origin: `cli@${host}`,
      });
    return { result };
  } catch (error) {
    // The change is made and its output is due (a token shown once): the entry is what failed.
    return {
      result,
      warning: `the change was made, but its audit log entry could not be recorded: ${(error as Error).message}`,
    };
  }
}

/**
 * The audit log of the admin commands, kept by the dispatcher in one place: each state-changing
 * command is recorded once it succeeded, as the console records its actions (the same action
 * names), with the OS user who ran it as the actor, source `cli`, and `cli@<hostname>` as where
 * it came from. The entry belongs to the workspace the command acted on, so the console's Audit
 * page lists it. Option values are recorded only where named below: a password, a credential, a
 * message body or a phone number never reaches the log.
 */
import { type AuditedRecord, auditSubjectOf, recordAudit } from '../commands/audit.js';
import { findWorkspace } from '../commands/workspaces.js';
import { operatorIdentity } from '../config/operator.js';
import type { CommandResult, Options } from './commands/options.js';
import type { AdminCommand } from './commands/table.js';
import type { AdminContext } from './context.js';

type Details = Record<string, string | number | boolean | null>;
type Output = Record<string, unknown>;

interface CommandAudit {
  /** As the console names it: `api_key.created`. */
  action: string;
  /**
   * The workspace acted on: its `--workspace` option (the default), the `id` of the command's
   * output (a workspace it created or updated), or the workspace of the record `--id` names,
   * looked up before the command runs (a deleted record is gone after).
   */
  workspace?: 'option' | 'output' | { record: AuditedRecord };
  /** What it acted on; a record's own name when not given. */
  target?: (options: Options, output: Output) => string;
  details?: (options: Options, output: Output) => Details;
}

/** An option's value as given, trimmed; absent when not given. */
const given = (options: Options, name: string) => {
  const value = options[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
};
const word = (value: unknown) => String(value ?? '');
const joined = (value: unknown) => (Array.isArray(value) ? value.join(',') : word(value));
/** The options given among `names`, as the operator typed them. */
const asked = (options: Options, ...names: string[]): Details =>
  Object.fromEntries(
    names.flatMap((name) => {
      const value = given(options, name);
      return value === undefined ? [] : [[name.replaceAll('-', '_'), value]];
    }),
  );

/** Every state-changing admin command, by name. */
const AUDITED: Record<string, CommandAudit> = {
  'workspace create': {
    action: 'workspace.created',
    workspace: 'output',
    target: (_, output) => `workspace ${word(output.slug)}`,
    details: (options) => asked(options, 'name'),
  },
  'workspace update': {
    action: 'workspace.updated',
    workspace: 'output',
    target: (_, output) => `workspace ${word(output.slug)}`,
    details: (options) => asked(options, 'name', 'api-enabled'),
  },
  'user create': {
    action: 'member.added',
    target: (options) => `member ${word(given(options, 'email')).toLowerCase()}`,
    details: (options) => asked(options, 'role'),
  },
  'key create': {
    action: 'api_key.created',
    target: (_, output) => `API key ${word(output.prefix)}`,
    details: (options, output) => ({
      abilities: joined(output.abilities),
      ...asked(options, 'name', 'provider', 'failover-route', 'user'),
    }),
  },
  'key revoke': { action: 'api_key.revoked', workspace: { record: 'api_key' } },
  'provider create': {
    action: 'provider.created',
    target: (_, output) => `provider ${word(output.slug)}`,
    details: (options) => asked(options, 'type'),
  },
  'provider enable': {
    action: 'provider.enabled',
    target: (_, output) => `provider ${word(output.slug)}`,
  },
  'provider disable': {
    action: 'provider.disabled',
    target: (_, output) => `provider ${word(output.slug)}`,
  },
  'route create': {
    action: 'failover_route.created',
    target: (_, output) => `failover route ${word(output.slug)}`,
    details: (_, output) => ({ providers: joined(output.providers) }),
  },
  'credits add': {
    action: 'credits.added',
    target: (options) => `workspace ${word(given(options, 'workspace'))}`,
    details: (options, output) => ({
      amount: Number(given(options, 'amount')),
      balance: Number(output.balance),
    }),
  },
  'otp-service create': {
    action: 'otp_service.created',
    target: (_, output) => `OTP service ${word(output.name)}`,
    details: (_, output) => ({ slug: word(output.slug) }),
  },
  'otp-service update': {
    action: 'otp_service.updated',
    target: (_, output) => `OTP service ${word(output.name)}`,
    details: (_, output) => ({ slug: word(output.slug) }),
  },
  'otp-service delete': {
    action: 'otp_service.deleted',
    target: (_, output) => `OTP service ${word(output.slug)}`,
  },
  'template create': {
    action: 'template.created',
    target: (_, output) => `template ${word(output.slug)}`,
    details: (options) => asked(options, 'purpose'),
  },
  'template update': {
    action: 'template.updated',
    target: (_, output) => `template ${word(output.slug)}`,
    details: (_, output) => ({ purpose: word(output.purpose), enabled: output.enabled === true }),
  },
  'template delete': {
    action: 'template.deleted',
    target: (_, output) => `template ${word(output.slug)}`,
  },
  'sender create': {
    action: 'sender.created',
    target: (options) => `sender ${word(given(options, 'sender'))}`,
    details: (options) => ({ ...asked(options, 'provider'), approved: options.pending !== true }),
  },
  'sender delete': {
    action: 'sender.deleted',
    target: (_, output) => `sender ${word(output.sender)}`,
    details: (_, output) => ({ provider: word(output.provider_slug) }),
  },
  'campaign create': {
    action: 'campaign.created',
    target: (_, output) => `campaign #${word(output.id)}`,
    details: (options, output) => ({ ...asked(options, 'name'), status: word(output.status) }),
  },
  'campaign resume': {
    action: 'campaign.resumed',
    target: (_, output) => `campaign #${word(output.id)}`,
    details: (_, output) => ({ status: word(output.status) }),
  },
  'member update': {
    action: 'member.updated',
    target: (_, output) => `member ${word(output.email)}`,
    details: (_, output) => ({
      role: word(output.role),
      status: word(output.status),
      permissions: joined(output.permissions),
    }),
  },
  'member remove': {
    action: 'member.removed',
    target: (options) => `member ${word(given(options, 'email')).toLowerCase()}`,
  },
  'invite create': {
    action: 'invitation.created',
    target: (options) => `invitation ${word(given(options, 'email')).toLowerCase()}`,
    details: (options, output) => ({ invitation_id: Number(output.id), ...asked(options, 'role') }),
  },
  'invite revoke': { action: 'invitation.revoked', workspace: { record: 'invitation' } },
  'mcp connections revoke': {
    action: 'mcp_connection.revoked',
    workspace: { record: 'mcp_connection' },
  },
  'webhook create': {
    action: 'webhook.created',
    target: (_, output) => `webhook ${word(output.url)}`,
    details: (_, output) => ({ events: joined(output.events) }),
  },
  'webhook enable': { action: 'webhook.enabled', workspace: { record: 'webhook_endpoint' } },
  'webhook disable': { action: 'webhook.disabled', workspace: { record: 'webhook_endpoint' } },
  'webhook delete': { action: 'webhook.deleted', workspace: { record: 'webhook_endpoint' } },
};

/** The admin commands that change nothing, and so are not recorded. */
export const READ_ONLY_COMMANDS: ReadonlySet<string> = new Set([
  'template list',
  'sender list',
  'invite list',
  'member list',
  'webhook list',
  'webhook attempts',
  'mcp connections list',
]);

export const AUDITED_COMMANDS: ReadonlySet<string> = new Set(Object.keys(AUDITED));

/**
 * How a command is recorded. One that is in neither list (added without a line here) is recorded
 * by its name, so a change never goes unrecorded; test/unit/cli-audit.test.ts catches the omission.
 */
function auditOf(name: string): CommandAudit | undefined {
  if (READ_ONLY_COMMANDS.has(name)) return undefined;
  return AUDITED[name] ?? { action: `cli.${name.replaceAll(' ', '.')}` };
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

/** Runs the command and records it: a failed command records nothing. */
export async function runAudited(
  context: AdminContext,
  command: AdminCommand,
  options: Options,
): Promise<AuditedRun> {
  const audit = auditOf(command.name);
  const record = audit && (await recordBefore(context, audit, options));
  const result = await command.run(context, options);
  if (!audit) return { result };
  try {
    const { user, host } = operatorIdentity();
    await recordAudit(context, {
      workspaceId: await workspaceIdOf(context, audit, options, result.json, record),
      userId: null,
      actor: user,
      source: 'cli',
      action: audit.action,
      target: audit.target?.(options, result.json) ?? record?.target ?? null,
      details: audit.details?.(options, result.json) ?? {},
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

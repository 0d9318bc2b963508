import { parseArgs } from 'node:util';
import { ConfigError } from '../config/env.js';
import * as admin from './commands/admin.js';
import * as campaigns from './commands/campaigns.js';
import * as invites from './commands/invites.js';
import * as mcpAdmin from './commands/mcp-admin.js';
import * as members from './commands/members.js';
import * as otpAdmin from './commands/otp-admin.js';
import * as providers from './commands/providers.js';
import * as webhooks from './commands/webhooks.js';
import { withAdminContext } from './context.js';
import { printError, printResult, UsageError } from './output.js';

const USAGE = `Usage: herald <command> [options]

Run:
  start                 api + worker, with embedded Postgres and Temporal when unconfigured
  api                   the HTTP api only (needs DATABASE_URL and TEMPORAL_ADDRESS)
  worker                the Temporal worker only (needs DATABASE_URL and TEMPORAL_ADDRESS)
  simulator             the provider simulator only (SIMULATOR_PORT)
  migrate               apply pending database migrations

Administer (each accepts --json and then prints one JSON object):
  workspace create --name <name> [--slug <slug>]
  workspace update --slug <slug> [--name <name>] [--api-enabled true|false]
  user create --workspace <slug> --email <email> --password <pw> [--role owner|admin|developer|viewer]
  key create --workspace <slug> --abilities <a,b,...> [--user <email>] [--name <name>]
             [--provider <slug> | --failover-route <slug>]
  key revoke --id <id>
  provider create --workspace <slug> --slug <slug> --type simulator --base-url <url>
                  [--name <name>] [--requires-sender-id] [--messages-per-second <n>]
                  [--countries <AU,NZ,...>]
  provider create --workspace <slug> --slug <slug> --type twilio --account-sid <AC…>
                  --auth-token <token> [--from <E.164 or alphanumeric>]
                  [--messaging-service-sid <MG…>] [--base-url <url>] [--name <name>]
                  [--requires-sender-id] [--messages-per-second <n>] [--countries <AU,NZ,...>]
                  (the token is stored encrypted, never shown)
  provider create --workspace <slug> --slug <slug> --type smpp --host <host> --port <port>
                  --system-id <id> --password <pw> [--system-type <type>]
                  [--source-addr <default sender>] [--window <1-100, default 10>]
                  [--name <name>] [--requires-sender-id] [--messages-per-second <n, default 50>]
                  (SMPP 3.4 transceiver; the password is stored encrypted, never shown)
  provider enable|disable --workspace <slug> --slug <slug>
  route create --workspace <slug> --slug <slug> --providers <a,b,...> [--name <name>]
  credits add --workspace <slug> --amount <n>
  otp-service create --workspace <slug> --name <name> --purpose <purpose>
                     [--code-length 6-8] [--expires-in-minutes 1-10]
                     [--template <slug> | --message-template <text with {code}>]
                     [--sender-id <sender>] [--provider <slug>]
  otp-service update --workspace <slug> --slug <uuid> [any option of create]
  otp-service delete --workspace <slug> --slug <uuid>
  template create --workspace <slug> --slug <slug> --body <text> [--name <name>]
                  [--purpose transactional|marketing] [--disabled]
  sender create --workspace <slug> --provider <slug> --sender <name> [--pending]
  campaign create --workspace <slug> --name <name> --recipients <e164,e164,...> --body <text>
                  [--purpose transactional|marketing] [--sender-id <id>]
                  [--provider <slug> | --failover-route <slug>]
  campaign resume --workspace <slug> --id <id>      dispatch a campaign left paused
  member list --workspace <slug>
  member update --workspace <slug> --email <email> [--role owner|admin|developer|viewer]
                [--permissions <a,b,...> | --grant <a,...> --revoke <a,...>]
                [--status active|suspended]
  member remove --workspace <slug> --email <email>
  invite create --workspace <slug> --email <email> [--role <role>] [--expires-in-days 1-30]
  invite list --workspace <slug>
  invite revoke --id <id>
  mcp connections list [--workspace <slug>] [--user <email>]
  mcp connections revoke --id <id>
  webhook create --workspace <slug> --url <http(s) url> --events <a,b,...|all>
                 [--description <text>]   (the signing secret is shown once)
                 events: message.sent, message.delivered, message.failed,
                 campaign.completed, otp.accepted, otp.verified, otp.expired
  webhook list --workspace <slug>
  webhook enable|disable|delete --id <id>
  webhook attempts --id <id> [--limit 1-1000]       the delivery log, newest first
`;

type AdminCommand = (
  context: Parameters<typeof admin.keyCreate>[0],
  options: admin.Options,
) => Promise<admin.CommandResult>;

const OTP_SERVICE_OPTIONS: string[] = [...otpAdmin.SETTING_OPTIONS];

const ADMIN_COMMANDS: Record<string, { run: AdminCommand; options: string[] }> = {
  'workspace create': { run: admin.workspaceCreate, options: ['name', 'slug'] },
  'workspace update': { run: admin.workspaceUpdate, options: ['slug', 'name', 'api-enabled'] },
  'user create': { run: admin.userCreate, options: ['workspace', 'email', 'password', 'role'] },
  'key create': {
    run: admin.keyCreate,
    options: ['workspace', 'user', 'abilities', 'provider', 'failover-route', 'name'],
  },
  'key revoke': { run: admin.keyRevoke, options: ['id'] },
  'provider create': {
    run: providers.providerCreate,
    options: ['workspace', 'slug', 'name', 'type', ...providers.PROVIDER_CREATE_OPTIONS],
  },
  'provider enable': { run: providers.providerEnable, options: ['workspace', 'slug'] },
  'provider disable': { run: providers.providerDisable, options: ['workspace', 'slug'] },
  'route create': {
    run: providers.routeCreate,
    options: ['workspace', 'slug', 'name', 'providers'],
  },
  'credits add': { run: otpAdmin.creditsAdd, options: ['workspace', 'amount'] },
  'otp-service create': {
    run: otpAdmin.otpServiceCreate,
    options: ['workspace', ...OTP_SERVICE_OPTIONS],
  },
  'otp-service update': {
    run: otpAdmin.otpServiceUpdate,
    options: ['workspace', 'slug', ...OTP_SERVICE_OPTIONS],
  },
  'otp-service delete': { run: otpAdmin.otpServiceDelete, options: ['workspace', 'slug'] },
  'template create': {
    run: otpAdmin.templateCreate,
    options: ['workspace', 'slug', 'body', 'name', 'purpose', 'disabled'],
  },
  'sender create': {
    run: otpAdmin.senderCreate,
    options: ['workspace', 'provider', 'sender', 'pending'],
  },
  'campaign create': {
    run: campaigns.campaignCreate,
    options: [
      'workspace',
      'name',
      'recipients',
      'body',
      'purpose',
      'sender-id',
      'provider',
      'failover-route',
    ],
  },
  'campaign resume': { run: campaigns.campaignResume, options: ['workspace', 'id'] },
  'member list': { run: members.memberList, options: ['workspace'] },
  'member update': {
    run: members.memberUpdate,
    options: ['workspace', 'email', 'role', 'permissions', 'grant', 'revoke', 'status'],
  },
  'member remove': { run: members.memberRemove, options: ['workspace', 'email'] },
  'invite create': {
    run: invites.inviteCreate,
    options: ['workspace', 'email', 'role', 'expires-in-days'],
  },
  'invite list': { run: invites.inviteList, options: ['workspace'] },
  'invite revoke': { run: invites.inviteRevoke, options: ['id'] },
  'mcp connections list': { run: mcpAdmin.connectionsList, options: ['workspace', 'user'] },
  'mcp connections revoke': { run: mcpAdmin.connectionsRevoke, options: ['id'] },
  'webhook create': {
    run: webhooks.webhookCreate,
    options: ['workspace', 'url', 'events', 'description'],
  },
  'webhook list': { run: webhooks.webhookList, options: ['workspace'] },
  'webhook enable': { run: webhooks.webhookEnable, options: ['id'] },
  'webhook disable': { run: webhooks.webhookDisable, options: ['id'] },
  'webhook delete': { run: webhooks.webhookDelete, options: ['id'] },
  'webhook attempts': { run: webhooks.webhookAttempts, options: ['id', 'limit'] },
};

/**
 * The admin command named by the leading words (two, or three as in `mcp connections list`),
 * the longest match winning, and the arguments after them.
 */
function findAdminCommand(argv: string[]) {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-') || words.length === 3) break;
    words.push(arg);
  }
  for (let count = words.length; count >= 2; count--) {
    const command = ADMIN_COMMANDS[words.slice(0, count).join(' ')];
    if (command) return { command, args: argv.slice(count) };
  }
  throw new UsageError(`Unknown command "${words.join(' ')}"`);
}

/** The roles load the api, worker and MCP server: only when run, so admin commands start fast. */
const loadServe = () => import('./commands/serve.js');

const SERVE_COMMANDS: Record<string, () => Promise<void>> = {
  start: async () => (await loadServe()).start(),
  api: async () => (await loadServe()).api(),
  worker: async () => (await loadServe()).worker(),
  simulator: async () => (await loadServe()).simulator(),
};

const BOOLEAN_OPTIONS = new Set(['requires-sender-id', 'disabled', 'pending']);

function parseOptions(args: string[], names: string[]) {
  const options = Object.fromEntries(
    names.map((name) => [
      name,
      { type: BOOLEAN_OPTIONS.has(name) ? ('boolean' as const) : ('string' as const) },
    ]),
  );
  try {
    const { values } = parseArgs({
      args,
      options: { ...options, json: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    });
    return values;
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'invalid arguments');
  }
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  try {
    const [first = ''] = argv;
    if (first === '' || first === 'help' || first === '--help' || first === '-h') {
      process.stdout.write(USAGE);
      return first === '' ? 2 : 0;
    }
    const serveCommand = SERVE_COMMANDS[first];
    if (serveCommand) {
      parseOptions(argv.slice(1), []);
      await serveCommand();
      return -1; // keeps running until a signal
    }
    if (first === 'migrate') {
      parseOptions(argv.slice(1), []);
      const { applied } = await (await loadServe()).migrateCommand();
      printResult(
        json,
        { applied },
        applied.length ? `Applied ${applied.join(', ')}` : 'Nothing to apply',
      );
      return 0;
    }
    const { command, args } = findAdminCommand(argv);
    const options = parseOptions(args, command.options);
    const result = await withAdminContext((context) => command.run(context, options));
    printResult(json, result.json, result.human);
    return 0;
  } catch (error) {
    const known = error instanceof UsageError || error instanceof ConfigError;
    printError(json, error as Error);
    if (error instanceof UsageError && !json) process.stderr.write(`\n${USAGE}`);
    if (!known) process.stderr.write(`${(error as Error).stack ?? ''}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);

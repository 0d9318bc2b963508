import { parseArgs } from 'node:util';
import { ConfigError } from '../config/env.js';
import { isDroppedTypeQueryFailure } from '../db/client.js';
import { ADMIN_COMMANDS } from './admin/index.js';
import { type AdminCommand, optionsOf, usageOf } from './admin/table.js';
import { runAsOperator, withAdminContext } from './context.js';
import { printError, printResult, UsageError } from './output.js';

const ADMIN_COMMAND_BY_NAME = new Map(ADMIN_COMMANDS.map((command) => [command.name, command]));

/** A command line naming no command: shown with the commands it could have meant. */
class UnknownCommandError extends UsageError {
  constructor(readonly words: string[]) {
    super(`Unknown command "${words.join(' ')}"`);
  }
}

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
    const command = ADMIN_COMMAND_BY_NAME.get(words.slice(0, count).join(' '));
    if (command) return { command, args: argv.slice(count) };
  }
  throw new UnknownCommandError(words);
}

/** The roles load the api, worker and MCP server: only when run, so admin commands start fast. */
const loadServe = () => import('./admin/serve.js');

interface RunCommand {
  /** Its description in usage, line by line. */
  summary: string[];
  run?: () => Promise<void>;
}

/** The roles and `migrate`, in the order usage lists them. */
const RUN_COMMANDS: Record<string, RunCommand> = {
  start: {
    summary: ['api + worker, with embedded Postgres and Temporal when unconfigured'],
    run: async () => (await loadServe()).start(),
  },
  cluster: {
    summary: [
      'the production shape on one machine: a Temporal cluster on Postgres,',
      '2 api and 2 worker processes, the simulator (builds Temporal once)',
    ],
    run: async () => (await import('./admin/cluster.js')).cluster(),
  },
  api: {
    summary: ['the HTTP api only (needs DATABASE_URL and TEMPORAL_ADDRESS)'],
    run: async () => (await loadServe()).api(),
  },
  worker: {
    summary: ['the Temporal worker only (needs DATABASE_URL and TEMPORAL_ADDRESS)'],
    run: async () => (await loadServe()).worker(),
  },
  simulator: {
    summary: ['the provider simulator only (SIMULATOR_PORT)'],
    run: async () => (await loadServe()).simulator(),
  },
  // Prints what it applied: main runs it.
  migrate: { summary: ['apply pending database migrations'] },
};

/** Where a run command's summary starts. */
const RUN_SUMMARY_COLUMN = 24;

const runUsageOf = (names: string[]) =>
  names.flatMap((name) =>
    (RUN_COMMANDS[name]?.summary ?? []).map(
      (line, index) => `  ${index === 0 ? name : ''}`.padEnd(RUN_SUMMARY_COLUMN) + line,
    ),
  );

const runUsage = runUsageOf(Object.keys(RUN_COMMANDS));

/** Generated from the tables above: every option is listed once, where its command is. */
const USAGE = `Usage: herald <command> [options]

Run:
${runUsage.join('\n')}

Administer (each accepts --json and then prints one JSON object):
${usageOf(ADMIN_COMMANDS)}`;

/** `  user list --workspace <slug>` as `  herald user list ...`, continuation lines aligned. */
const withProgramName = (usage: string) =>
  usage
    .trimEnd()
    .split('\n')
    .map((line) => (/^ {2}\S/.test(line) ? `  herald ${line.slice(2)}` : `       ${line}`))
    .join('\n');

/** What follows a usage error's one line: the usage of the command it concerns, only. */
const usageOfCommand = (command: AdminCommand) =>
  `Usage:\n${withProgramName(usageOf([command]))}\n`;

/**
 * What follows an unknown command's one line: the commands of the resource it named
 * (`herald workspace frob`), or every command, a line per resource, without their options.
 */
function commandsFor(words: string[]): string {
  const [resource] = words;
  const ofResource = ADMIN_COMMANDS.filter((command) => command.name.split(' ')[0] === resource);
  if (ofResource.length > 0) return `Usage:\n${withProgramName(usageOf(ofResource))}\n`;
  const verbs = new Map<string, string[]>();
  for (const { name } of ADMIN_COMMANDS) {
    // `mcp connections list`: the noun is every word but the verb.
    const noun = name.slice(0, name.lastIndexOf(' '));
    verbs.set(noun, [...(verbs.get(noun) ?? []), name.slice(noun.length + 1)]);
  }
  const lines = [...verbs].map(([noun, nounVerbs]) => `  ${noun} ${nounVerbs.join('|')}`);
  return [
    'Commands (`herald help` shows their options):',
    `  ${Object.keys(RUN_COMMANDS).join('|')}`,
    ...lines,
    '',
  ].join('\n');
}

function parseOptions(args: string[], command?: AdminCommand) {
  const options = Object.fromEntries(
    (command ? optionsOf(command) : []).map((option) => [
      option.name,
      { type: option.value === undefined ? ('boolean' as const) : ('string' as const) },
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

/**
 * For one-off commands (the roles have their own handler, cli/admin/serve.ts): postgres.js's
 * dropped type query (db/guarded-pool.ts, 4.) must not end a command whose own calls are handled,
 * as it did when Postgres stopped under `herald migrate` on Ctrl-C (exit 1, not 130). Any other
 * unhandled rejection still ends the process, as Node's default would.
 */
function exitOnUnhandledRejections(): void {
  process.on('unhandledRejection', (reason) => {
    if (isDroppedTypeQueryFailure(reason)) return;
    const shown = reason instanceof Error ? (reason.stack ?? reason.message) : String(reason);
    process.stderr.write(`herald: unhandled rejection: ${shown}\n`);
    process.exit(1);
  });
}

/** The usage a usage error is followed by: the command's own, never all of it. */
function usageAfter(error: UsageError, argv: string[], command: AdminCommand | undefined): string {
  if (error instanceof UnknownCommandError) return commandsFor(error.words);
  if (command) return usageOfCommand(command);
  // A run command (`herald start --prot 1`), or a configuration error of one.
  return `Usage: herald <command>\n${runUsageOf([argv[0] ?? '']).join('\n')}\n`;
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  // Known once the command line names one: its usage follows a usage error.
  let command: AdminCommand | undefined;
  try {
    const [first = ''] = argv;
    if (first === '' || first === 'help' || first === '--help' || first === '-h') {
      process.stdout.write(USAGE);
      return first === '' ? 2 : 0;
    }
    const serveCommand = RUN_COMMANDS[first]?.run;
    if (serveCommand) {
      // A typo such as `herald start --prot 1`: no usage to show but the roles'.
      parseOptions(argv.slice(1));
      await serveCommand();
      return -1; // keeps running until a signal
    }
    exitOnUnhandledRejections();
    if (first === 'migrate') {
      parseOptions(argv.slice(1));
      const { applied } = await (await loadServe()).migrateCommand();
      printResult(
        json,
        { applied },
        applied.length ? `Applied ${applied.join(', ')}` : 'Nothing to apply',
      );
      return 0;
    }
    const found = findAdminCommand(argv);
    command = found.command;
    const options = parseOptions(found.args, found.command);
    // Its use-cases record what it changes in the audit log, by the operator.
    const result = await withAdminContext((context) =>
      runAsOperator(context, found.command, options),
    );
    printResult(json, result.json, result.human);
    return result.exitCode ?? 0;
  } catch (error) {
    const known = error instanceof UsageError || error instanceof ConfigError;
    printError(json, error as Error);
    if (error instanceof UsageError && !json)
      process.stderr.write(usageAfter(error, argv, command));
    if (!known) process.stderr.write(`${(error as Error).stack ?? ''}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);

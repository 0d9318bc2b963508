/**
 * herald guard show|set|unblock: the fraud guard's settings of a workspace or one of its OTP
 * services (commands/fraud-guard/settings.ts), and lifting a number range the breaker blocked.
 */
import {
  type GuardView,
  presentGuard,
  setGuard,
  showGuard,
  unblockRange,
} from '../../commands/fraud-guard/settings.js';
import type { AdminContext } from '../context.js';
import { type CommandResult, type Options, run, text } from './options.js';
import { type AdminCommand, optional, required, text as usageText } from './table.js';

/** The settings `guard set` takes, by option, as presentGuard names them. */
const SETTINGS = [
  ['otp-per-recipient', 'otp_per_recipient'],
  ['otp-countries', 'otp_countries'],
  ['sms-countries', 'sms_countries'],
  ['block-prefix', 'block_prefix'],
  ['range-breaker', 'range_breaker'],
  ['daily-segments', 'daily_segments'],
  ['cap-near-percent', 'cap_near_percent'],
  ['key-rate', 'key_rate'],
  ['workspace-rate', 'workspace_rate'],
] as const;

/** A short readable summary: each setting (marked when inherited), then the blocked ranges. */
function summary(view: GuardView): string {
  const shown = presentGuard(view);
  const scope = shown.otp_service
    ? `OTP service ${shown.otp_service} of ${shown.workspace}`
    : shown.workspace;
  const width = Math.max(...SETTINGS.map(([option]) => option.length)) + 2;
  const lines = SETTINGS.map(([option, name]) => {
    let value = String(shown[name] ?? 'none');
    if (name === 'daily_segments' && shown.daily_segments !== null)
      value += ` (${shown.daily_segments_used} used today)`;
    const inherited = shown.inherited.includes(name) ? '  (inherited)' : '';
    return `  ${option.padEnd(width)}${value}${inherited}`;
  });
  const ranges = shown.blocked_ranges.map(
    (block) =>
      `  ${block.range} until ${block.blocked_until} (${block.sends} sends, ${block.verified} verified)`,
  );
  return [
    `Fraud guard of ${scope}:`,
    ...lines,
    ranges.length ? 'Blocked ranges:' : 'Blocked ranges: none',
    ...ranges,
  ].join('\n');
}

/** herald guard show --workspace <slug> [--otp-service <uuid>] → presentGuard's object */
export async function guardShow(context: AdminContext, options: Options): Promise<CommandResult> {
  const view = await run(
    showGuard(context, {
      workspace: text(options, 'workspace'),
      otpService: text(options, 'otp-service'),
    }),
  );
  return { json: presentGuard(view), human: summary(view) };
}

/** herald guard set --workspace <slug> [--otp-service <uuid>] [setting options] → as show */
export async function guardSet(context: AdminContext, options: Options): Promise<CommandResult> {
  const view = await run(
    setGuard(
      context,
      {
        workspace: text(options, 'workspace'),
        otpService: text(options, 'otp-service'),
        otpPerRecipient: text(options, 'otp-per-recipient'),
        countries: text(options, 'countries'),
        otpCountries: text(options, 'otp-countries'),
        smsCountries: text(options, 'sms-countries'),
        blockPrefix: text(options, 'block-prefix'),
        rangeBreaker: text(options, 'range-breaker'),
        dailySegments: text(options, 'daily-segments'),
        capNearPercent: text(options, 'cap-near-percent'),
        keyRate: text(options, 'key-rate'),
        workspaceRate: text(options, 'workspace-rate'),
      },
      context.actor,
    ),
  );
  return { json: presentGuard(view), human: `Updated.\n${summary(view)}` };
}

/**
 * herald guard unblock --workspace <slug> --range <prefix> → {"workspace", "range", "lifted"}; the
 * block is lifted by the command's actor (the OS user who ran `herald`), as the audit log names
 * them.
 */
export async function guardUnblock(
  context: AdminContext,
  options: Options,
): Promise<CommandResult> {
  const { workspace, range, lifted } = await run(
    unblockRange(
      context,
      { workspace: text(options, 'workspace'), range: text(options, 'range') },
      context.actor,
    ),
  );
  return {
    json: { workspace: workspace.slug, range, lifted },
    human: `Lifted the block on ${range} in ${workspace.slug}; its OTP sends count afresh from now`,
  };
}

const COUNTRIES = '<AU,NZ|any>';
const RATE = '<n>/<s|m>|off';

export const GUARD_COMMANDS: AdminCommand[] = [
  {
    name: 'guard show',
    run: guardShow,
    synopses: [[[required('workspace', '<slug>'), optional('otp-service', '<uuid>')]]],
  },
  {
    name: 'guard set',
    run: guardSet,
    synopses: [
      [
        [required('workspace', '<slug>'), optional('otp-service', '<uuid>')],
        [optional('otp-per-recipient', '<n>/<window>,...|off')],
        [optional('range-breaker', '<n>/<window>@<percent>%,<cool-down>|off')],
        [
          optional('countries', COUNTRIES),
          optional('otp-countries', COUNTRIES),
          optional('sms-countries', COUNTRIES),
        ],
        [
          optional('block-prefix', '<+882,+4470,...,default|none>'),
          optional('daily-segments', '<n|none>'),
        ],
        [
          optional('cap-near-percent', '1-100'),
          optional('key-rate', RATE),
          optional('workspace-rate', RATE),
        ],
        [usageText("(any value inherit: back to the workspace's, or the default)")],
      ],
    ],
  },
  {
    name: 'guard unblock',
    run: guardUnblock,
    synopses: [[[required('workspace', '<slug>'), required('range', '<prefix>')]]],
  },
];

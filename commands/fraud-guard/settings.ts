/**
 * Operating the fraud guard (`herald guard show|set|unblock`, the console's Fraud guard page):
 * the settings in force and which are inherited, changes to them, and lifting a blocked range.
 * Values arrive in their text forms (domain/fraud-guard.ts): `5/15m,10/24h`, `20/1h@10%,1h`.
 */

import type { Sql } from '../../db/client.js';
import {
  findDailyUsage,
  findGuardOverrides,
  liftRangeBlocks,
  listBlockedRanges,
  lockGuardSettings,
  type RangeBlock,
  saveGuardOverrides,
  startDailyUsage,
  stopDailyUsage,
} from '../../db/fraud-guard.js';
import { findOtpService } from '../../db/otp-settings.js';
import type { Workspace } from '../../db/workspaces.js';
import {
  effectiveGuard,
  expandPrefixes,
  formatCountries,
  formatPrefixes,
  formatRangeBreaker,
  formatRequestRate,
  formatSendWindows,
  type GuardOverrides,
  type GuardSettings,
  parseCountries,
  parsePrefixes,
  parseRangeBreaker,
  parseRequestRate,
  parseSendWindows,
  SERVICE_SETTINGS,
} from '../../domain/fraud-guard.js';
import { E164_PREFIX } from '../../domain/phone.js';
import { UUID } from '../../domain/request-schema.js';
import type { Actor } from '../actor.js';
import { writeAudit } from '../audit.js';
import { type FieldRef, fieldsOf, invalid, notFound, optionalText, refuseAll } from '../input.js';
import { findWorkspace } from '../team/workspaces.js';

interface Deps {
  sql: Sql;
}

/** Clears a setting: a service's then follows its workspace, a workspace's the default. */
export const INHERIT = 'inherit';

export interface GuardScopeInput {
  workspace?: string;
  /** An OTP service's slug (UUID): its own settings over the workspace's. */
  otpService?: string;
}

export interface GuardSetInput extends GuardScopeInput {
  otpPerRecipient?: string;
  /** Both OTP and SMS (a service: OTP). */
  countries?: string;
  otpCountries?: string;
  smsCountries?: string;
  blockPrefix?: string;
  rangeBreaker?: string;
  dailySegments?: string;
  capNearPercent?: string;
  keyRate?: string;
  workspaceRate?: string;
}

export interface GuardView {
  workspace: Workspace;
  otpService: string | null;
  settings: GuardSettings;
  /** Settings this scope sets itself; the rest are inherited. */
  own: (keyof GuardSettings)[];
  blockedRanges: RangeBlock[];
  /** Segments counted today while a daily cap is set. */
  dailySegmentsUsed: number;
}

const field = fieldsOf<GuardSetInput>();

async function scopeOf(deps: Deps, input: GuardScopeInput) {
  const workspace = await findWorkspace(deps, input.workspace);
  const given = optionalText(input.otpService);
  if (given === undefined) return { workspace, otpService: null };
  const slug = given.toLowerCase();
  if (!UUID.test(slug) || !(await findOtpService(deps.sql, workspace.id, slug)))
    throw notFound`${field('otpService')} "${given}" is not an OTP service of ${workspace.slug}`;
  return { workspace, otpService: slug };
}

/** The settings in force for the workspace, or for one of its OTP services. */
export async function showGuard(deps: Deps, input: GuardScopeInput): Promise<GuardView> {
  const { workspace, otpService } = await scopeOf(deps, input);
  const overrides = await findGuardOverrides(deps.sql, workspace.id, otpService);
  const own = Object.keys(otpService ? overrides.service : overrides.workspace);
  return {
    workspace,
    otpService,
    settings: effectiveGuard(overrides.workspace, overrides.service),
    own: own as (keyof GuardSettings)[],
    blockedRanges: await listBlockedRanges(deps.sql, workspace.id),
    dailySegmentsUsed: await findDailyUsage(deps.sql, workspace.id),
  };
}

type Parsed = { [K in keyof GuardOverrides]-?: GuardOverrides[K] | typeof INHERIT };

function parseSetting<T>(
  text: string | undefined,
  ref: FieldRef,
  parser: (text: string) => T | undefined,
  shape: string,
): T | typeof INHERIT | undefined {
  const given = optionalText(text);
  if (given === undefined) return undefined;
  if (given === INHERIT) return INHERIT;
  const value = parser(given);
  if (value === undefined) throw invalid`${ref} "${given}" must be ${shape}, or ${INHERIT}`;
  return value;
}

const wholeNumber = (min: number, max: number) => (text: string) => {
  const value = Number(text);
  return /^\d+$/.test(text) && value >= min && value <= max ? value : undefined;
};

/** `--countries` sets a workspace's OTP and SMS countries, an OTP service's OTP countries. */
function parseChanges(
  input: GuardSetInput,
  forService: boolean,
  checks: ReturnType<typeof refuseAll>,
): Partial<Parsed> {
  // Each setting is checked, so a form shows all its refusals at once.
  const parse = <T>(
    text: string | undefined,
    ref: FieldRef,
    parser: (text: string) => T | undefined,
    shape: string,
  ) => checks.check(() => parseSetting(text, ref, parser, shape));
  const countries = parse(
    input.countries,
    field('countries'),
    parseCountries,
    'ISO 3166 alpha-2 country codes (AU,NZ) or any',
  );
  const changes: Partial<Parsed> = {
    otpPerRecipient: parse(
      input.otpPerRecipient,
      field('otpPerRecipient'),
      parseSendWindows,
      'sends per window, like 5/15m,10/24h, or off',
    ),
    otpCountries:
      parse(
        input.otpCountries,
        field('otpCountries'),
        parseCountries,
        'ISO 3166 alpha-2 country codes (AU,NZ) or any',
      ) ?? countries,
    smsCountries:
      parse(
        input.smsCountries,
        field('smsCountries'),
        parseCountries,
        'ISO 3166 alpha-2 country codes (AU,NZ) or any',
      ) ?? (forService ? undefined : countries),
    blockedPrefixes: parse(
      input.blockPrefix,
      field('blockPrefix'),
      parsePrefixes,
      'E.164 prefixes (+882,+4470), default for the built-in list, or none',
    ),
    rangeBreaker: parse(
      input.rangeBreaker,
      field('rangeBreaker'),
      parseRangeBreaker,
      'sends/window@percent%,cool-down, like 20/1h@10%,1h, or off',
    ),
    dailySegments: parse(
      input.dailySegments,
      field('dailySegments'),
      (text) => (text === 'none' ? null : wholeNumber(1, 1_000_000_000)(text)),
      'a whole number of segments, or none',
    ),
    capNearPercent: parse(
      input.capNearPercent,
      field('capNearPercent'),
      wholeNumber(1, 100),
      'a percentage from 1 to 100',
    ),
    keyRate: parse(
      input.keyRate,
      field('keyRate'),
      parseRequestRate,
      'requests per second or minute, like 100/s or 6000/m, or off',
    ),
    workspaceRate: parse(
      input.workspaceRate,
      field('workspaceRate'),
      parseRequestRate,
      'requests per second or minute, like 300/s, or off',
    ),
  };
  return Object.fromEntries(
    Object.entries(changes).filter(([, value]) => value !== undefined),
  ) as Partial<Parsed>;
}

const INPUT_OF: Record<keyof GuardSettings, keyof GuardSetInput> = {
  otpPerRecipient: 'otpPerRecipient',
  otpCountries: 'otpCountries',
  smsCountries: 'smsCountries',
  blockedPrefixes: 'blockPrefix',
  rangeBreaker: 'rangeBreaker',
  dailySegments: 'dailySegments',
  capNearPercent: 'capNearPercent',
  keyRate: 'keyRate',
  workspaceRate: 'workspaceRate',
};

/** The settings given, as the log records them: by option name (`block_prefix`), as typed. */
function givenSettings(input: GuardSetInput): Record<string, string> {
  return Object.fromEntries(
    Object.entries(input).flatMap(([name, value]) => {
      const given = typeof value === 'string' ? optionalText(value) : undefined;
      if (name === 'workspace' || name === 'otpService' || given === undefined) return [];
      return [[name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), given]];
    }),
  );
}

/**
 * Changes the settings given; the others keep their value. An OTP service takes only the OTP
 * settings (SERVICE_SETTINGS); `--countries` there sets its OTP countries. The change and its
 * audit line (by `actor`) are one transaction.
 */
export async function setGuard(deps: Deps, input: GuardSetInput, actor: Actor): Promise<GuardView> {
  const { workspace, otpService } = await scopeOf(deps, input);
  const checks = refuseAll();
  const changes = parseChanges(input, otpService !== null, checks);
  if (otpService) {
    const workspaceOnly = (Object.keys(changes) as (keyof GuardSettings)[]).filter(
      (name) => !(SERVICE_SETTINGS as readonly string[]).includes(name),
    );
    const [first] = workspaceOnly;
    if (first)
      checks.check(() => {
        throw invalid`${field(INPUT_OF[first])} is a workspace setting: give it without ${field('otpService')}`;
      });
  }
  checks.done();
  if (Object.keys(changes).length === 0)
    throw invalid`Give at least one setting to change, such as ${field('otpPerRecipient')}`;
  await deps.sql.begin(async (tx) => {
    await lockGuardSettings(tx, workspace.id);
    const current = await findGuardOverrides(tx, workspace.id, otpService);
    const next: Record<string, unknown> = { ...(otpService ? current.service : current.workspace) };
    for (const [name, value] of Object.entries(changes)) {
      if (value === INHERIT) delete next[name];
      else next[name] = value;
    }
    await saveGuardOverrides(tx, workspace.id, otpService, next as GuardOverrides);
    const cap = effectiveGuard(next as GuardOverrides).dailySegments;
    if (!otpService && cap !== null) await startDailyUsage(tx, workspace.id);
    else if (!otpService) await stopDailyUsage(tx, workspace.id);
    await writeAudit(tx, actor, workspace.id, {
      action: 'guard.updated',
      target: otpService ? `OTP service ${otpService}` : `workspace ${workspace.slug}`,
      details: givenSettings(input),
    });
  });
  return showGuard(deps, { workspace: workspace.slug, otpService: otpService ?? undefined });
}

/** Who lifted a block, as the range's row keeps it. */
function nameOf(actor: Actor): string {
  switch (actor.kind) {
    case 'member':
      return actor.email;
    case 'operator':
      return actor.user;
    case 'api_key':
      return `API key ${actor.prefix}`;
  }
}

/**
 * Lifts the blocks in force on a range (`+6141999`); its sends count afresh from now. `by` is who
 * lifts it, kept on the block and recorded in the audit log in the same transaction.
 */
export async function unblockRange(
  deps: Deps,
  input: { workspace?: string; range?: string },
  by: Actor,
): Promise<{ workspace: Workspace; range: string; lifted: number }> {
  const workspace = await findWorkspace(deps, input.workspace);
  const range = optionalText(input.range)?.replaceAll(' ', '');
  if (!range || !E164_PREFIX.test(range))
    throw invalid`${{ field: 'range' }} must be a number range like +6141999 (the number without its last 4 digits)`;
  const lifted = await deps.sql.begin(async (tx) => {
    const lifted = await liftRangeBlocks(tx, workspace.id, range, nameOf(by));
    if (lifted === 0)
      throw notFound`${{ field: 'range' }} "${range}" is not blocked in ${workspace.slug}`;
    await writeAudit(tx, by, workspace.id, {
      action: 'guard.range_unblocked',
      target: `range ${range}`,
      details: { range },
    });
    return lifted;
  });
  return { workspace, range, lifted };
}

/** The view as `--json` and the API print it: every value in its text form. */
export function presentGuard(view: GuardView) {
  const { settings } = view;
  return {
    workspace: view.workspace.slug,
    otp_service: view.otpService,
    otp_per_recipient: formatSendWindows(settings.otpPerRecipient),
    otp_countries: formatCountries(settings.otpCountries),
    sms_countries: formatCountries(settings.smsCountries),
    block_prefix: formatPrefixes(settings.blockedPrefixes),
    blocked_prefixes: expandPrefixes(settings.blockedPrefixes),
    range_breaker: formatRangeBreaker(settings.rangeBreaker),
    daily_segments: settings.dailySegments,
    daily_segments_used: view.dailySegmentsUsed,
    cap_near_percent: settings.capNearPercent,
    key_rate: formatRequestRate(settings.keyRate),
    workspace_rate: formatRequestRate(settings.workspaceRate),
    inherited: (Object.keys(settings) as (keyof GuardSettings)[])
      .filter((name) => !view.own.includes(name))
      .map((name) => INPUT_OF[name].replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)),
    blocked_ranges: view.blockedRanges.map((block) => ({
      range: block.range,
      blocked_at: block.blockedAt.toISOString(),
      blocked_until: block.blockedUntil.toISOString(),
      sends: block.sends,
      verified: block.verified,
    })),
  };
}

/**
 * Workspace → Fraud guard: the settings in force (the workspace's, or an OTP service's) and where
 * each comes from, changed with the rules of `herald guard set`; the ranges blocked now, each
 * with Unblock; the last 30 days of refusals per rule.
 */

import type { FastifyInstance } from 'fastify';
import { loadGuardReport } from '../../commands/fraud-guard/report.js';
import {
  type GuardSetInput,
  type GuardView,
  INHERIT,
  presentGuard,
  setGuard,
  showGuard,
  unblockRange,
} from '../../commands/fraud-guard/settings.js';
import { InputError } from '../../commands/input.js';
import { listWorkspaceOtpServices } from '../../commands/otp/service-listing.js';
import {
  BUILT_IN_BLOCKED_PREFIXES,
  type GuardSettings,
  SERVICE_SETTINGS,
} from '../../domain/fraud-guard.js';
import { can } from '../access.js';
import type { ConsoleContext } from '../context.js';
import { formErrors, orRefusal } from '../form-errors.js';
import { formPage } from '../form-page.js';
import type { SignedIn } from '../guard.js';
import { type Form, formOf, redirect, text } from '../http.js';

type Presented = ReturnType<typeof presentGuard>;

interface GuardField {
  setting: keyof GuardSettings;
  input: keyof GuardSetInput;
  /** The form field's name, and the setting's key in `guard show --json`. */
  name: keyof Presented & string;
  label: string;
  help: string;
}

const FIELDS: readonly GuardField[] = [
  {
    setting: 'otpPerRecipient',
    input: 'otpPerRecipient',
    name: 'otp_per_recipient',
    label: 'OTP per recipient',
    help: 'Codes to one number within each window, like 5/15m,10/24h; off for no limit.',
  },
  {
    setting: 'otpCountries',
    input: 'otpCountries',
    name: 'otp_countries',
    label: 'OTP countries',
    help: 'Countries that codes may be sent to (ISO 3166 alpha-2, like AU,NZ); any for every country.',
  },
  {
    setting: 'smsCountries',
    input: 'smsCountries',
    name: 'sms_countries',
    label: 'SMS countries',
    help: 'Countries that SMS may be sent to, like AU,NZ; any for every country.',
  },
  {
    setting: 'blockedPrefixes',
    input: 'blockPrefix',
    name: 'block_prefix',
    label: 'Blocked prefixes',
    help: `E.164 prefixes nothing is sent to, like +882,+4470; default stands for the built-in list (${BUILT_IN_BLOCKED_PREFIXES.map((item) => item.prefix).join(', ')}); none for no prefix.`,
  },
  {
    setting: 'rangeBreaker',
    input: 'rangeBreaker',
    name: 'range_breaker',
    label: 'Range breaker',
    help: 'sends/window@percent%,cool-down: 20/1h@10%,1h blocks a range (a number without its last 4 digits) for an hour once 20 codes went there within an hour with under 10 % verified; off for none.',
  },
  {
    setting: 'dailySegments',
    input: 'dailySegments',
    name: 'daily_segments',
    label: 'Daily segments',
    help: 'Segments per UTC day, SMS and OTP together, through every provider; none for no cap.',
  },
  {
    setting: 'capNearPercent',
    input: 'capNearPercent',
    name: 'cap_near_percent',
    label: 'Cap-near percent',
    help: "The spend.cap_near webhook event goes once the day's use reaches this share of the cap.",
  },
  {
    setting: 'keyRate',
    input: 'keyRate',
    name: 'key_rate',
    label: 'API key rate',
    help: 'Requests per API key, unless the key has its own rate: like 100/s or 6000/m; off for none.',
  },
  {
    setting: 'workspaceRate',
    input: 'workspaceRate',
    name: 'workspace_rate',
    label: 'Workspace rate',
    help: "All the workspace's API keys together, like 300/s; off for none.",
  },
];

const LABELS: Record<string, string> = {
  ...Object.fromEntries(FIELDS.map((field) => [field.input, field.label])),
  countries: 'Countries',
  otpService: 'OTP service',
  range: 'Range',
};

const FLASH: Record<string, string> = {
  saved: 'The fraud guard settings were saved. Sends are held to them from now on.',
  unchanged: 'Nothing was changed: every setting was as saved.',
  unblocked:
    'The range was unblocked: codes to its numbers are sent again, its sends counted afresh.',
};

/** The fields a scope has: an OTP service only the OTP ones it may override. */
const fieldsOf = (otpService: string | null) =>
  otpService
    ? FIELDS.filter((field) =>
        (SERVICE_SETTINGS as readonly (keyof GuardSettings)[]).includes(field.setting),
      )
    : FIELDS;

/** A setting's value in its text form, as `guard show` prints it. */
function textOf(presented: Presented, field: GuardField): string {
  const value = presented[field.name];
  return value === null ? 'none' : String(value);
}

/** The form as it shows the scope's own settings: an inherited one is blank (its placeholder). */
function formOfView(view: GuardView): Form {
  const presented = presentGuard(view);
  return Object.fromEntries(
    fieldsOf(view.otpService).map((field) => [
      field.name,
      view.own.includes(field.setting) ? textOf(presented, field) : '',
    ]),
  );
}

/**
 * What the form changes: a field whose text differs from the scope's own setting (a blank one:
 * back to inherited). Fields left as shown are not given, so an inherited setting stays inherited.
 */
function changesOf(form: Form, view: GuardView) {
  const shown = formOfView(view);
  const changes: Partial<Record<keyof GuardSetInput, string>> = {};
  for (const field of fieldsOf(view.otpService)) {
    const given = text(form, field.name)?.trim();
    if (given === undefined || given === shown[field.name]) continue;
    changes[field.input] = given === '' ? INHERIT : given;
  }
  return changes;
}

export async function fraudGuardRoutes(
  app: FastifyInstance,
  { context }: { context: ConsoleContext },
) {
  const { deps } = context;

  /** The page shows one scope's settings: the workspace's, or an OTP service's. */
  const page = formPage<{ view: GuardView }>({
    view: 'fraud-guard',
    labels: LABELS,
    fallbackField: 'otpPerRecipient',
    load: async ({ visitor }, { view }) => {
      const workspace = visitor.workspaceSlug;
      const [services, report, workspaceOwn] = await Promise.all([
        listWorkspaceOtpServices(deps, { workspace }),
        loadGuardReport(deps, visitor.workspaceId),
        view.otpService ? showGuard(deps, { workspace }).then((shown) => shown.own) : view.own,
      ]);
      const presented = presentGuard(view);
      const settings = fieldsOf(view.otpService).map((field) => ({
        ...field,
        value: textOf(presented, field),
        from: view.own.includes(field.setting)
          ? 'set here'
          : view.otpService && workspaceOwn.includes(field.setting)
            ? "workspace's"
            : 'default',
        inherited: !view.own.includes(field.setting),
      }));
      return {
        title: 'Fraud guard',
        chart: true,
        settings,
        dailySegmentsUsed: view.dailySegmentsUsed,
        services,
        service: services.find((candidate) => candidate.slug === view.otpService),
        blockedRanges: view.blockedRanges,
        report,
        series: JSON.stringify({
          days: report.days,
          lines: report.rules.map((rule) => ({ label: rule.label, values: rule.daily })),
        }),
        canManage: can(visitor, 'fraud_guard.manage'),
        form: formOfView(view),
      };
    },
  });

  const workspaceGuard = ({ visitor }: SignedIn) =>
    showGuard(deps, { workspace: visitor.workspaceSlug });

  app.get<{ Querystring: { done?: string; otp_service?: string } }>(
    '/fraud-guard',
    { config: { action: 'fraud_guard.view' } },
    async (request, reply) => {
      const signedIn = request.member;
      const flash = FLASH[request.query.done ?? ''];
      const shown = await orRefusal(() =>
        showGuard(deps, {
          workspace: signedIn.visitor.workspaceSlug,
          otpService: request.query.otp_service,
        }),
      );
      // An OTP service not found: the workspace's page, saying so.
      if (shown instanceof InputError)
        return page.notice(reply, shown, { view: await workspaceGuard(signedIn), flash });
      return page.show(reply, 200, { view: shown, flash });
    },
  );

  app.post('/fraud-guard', { config: { action: 'fraud_guard.manage' } }, async (request, reply) => {
    const signedIn = request.member;
    const form = formOf(request);
    const scope = {
      workspace: signedIn.visitor.workspaceSlug,
      otpService: text(form, 'otp_service')?.trim() || undefined,
    };
    const before = await orRefusal(() => showGuard(deps, scope));
    // An OTP service not found (deleted since the page was drawn): the workspace's page, saying so.
    if (before instanceof InputError)
      return page.notice(reply, before, { view: await workspaceGuard(signedIn) });
    const changes = changesOf(form, before);
    const back = `${signedIn.base}/fraud-guard`;
    const scopeQuery = before.otpService ? `&otp_service=${before.otpService}` : '';
    if (Object.keys(changes).length === 0)
      return redirect(request, reply, `${back}?done=unchanged${scopeQuery}`);
    return page.submit(reply, {
      state: { view: before },
      run: (_, { actor }) => setGuard(deps, { ...scope, ...changes }, actor),
      done: () => redirect(request, reply, `${back}?done=saved${scopeQuery}`),
    });
  });

  app.post(
    '/fraud-guard/unblock',
    { config: { action: 'fraud_guard.manage' } },
    async (request, reply) => {
      const signedIn = request.member;
      const range = text(formOf(request), 'range');
      const lifted = await orRefusal(() =>
        unblockRange(deps, { workspace: signedIn.visitor.workspaceSlug, range }, signedIn.actor),
      );
      if (lifted instanceof InputError) {
        return page.show(reply, lifted.status, {
          view: await workspaceGuard(signedIn),
          errors: formErrors(lifted, LABELS, 'range'),
        });
      }
      return redirect(request, reply, `${signedIn.base}/fraud-guard?done=unblocked`);
    },
  );
}

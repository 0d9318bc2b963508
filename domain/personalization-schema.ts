/**
 * The send request's `personalization` field (domain/send-request.ts): its schema, the rules it
 * has with `recipients` and `message`, and the texts it makes. Rules (docs/api.md "Personalisation"):
 * - a key is one of the recipients (compared normalized); its value is a flat object of at most
 *   20 string variables named `[a-z][a-z0-9_]{0,31}`;
 * - every recipient, with an entry or not, must have a value for each `{{name}}` of the message
 *   (422 on `personalization.<recipient>`); variables the message does not use are ignored;
 * - each recipient's rendered text is 1 to 1,600 characters and not blank;
 * - without the field, `{{…}}` in a message is plain text, as it always was.
 */
import { z } from 'zod';
import { OPT_OUT_PLACEHOLDER } from './opt-out.js';
import {
  MAX_VARIABLE_LENGTH,
  MAX_VARIABLES,
  missingVariables,
  placeholdersIn,
  renderPersonalized,
  VARIABLE_NAME,
  type Variables,
} from './personalization.js';
import { E164, parseE164 } from './phone.js';
import { fitsCharacters, NO_NUL, NOT_BLANK, optional } from './request-schema.js';

/** send-request.ts's MAX_MESSAGE_LENGTH (that module imports this one). */
const MAX_MESSAGE_LENGTH = 1600;
const NOT_AN_OBJECT = 'The :attribute field must be an object.';

/** One recipient's variables: checked whole, so each problem is reported once, at its place. */
const variables = z
  .record(z.string(), z.unknown(), { error: NOT_AN_OBJECT })
  .superRefine((given, context) => {
    const names = Object.keys(given);
    if (names.length > MAX_VARIABLES) {
      context.addIssue({
        code: 'custom',
        message: `The :attribute field must not have more than ${MAX_VARIABLES} variables.`,
      });
      return;
    }
    for (const name of names) {
      if (!VARIABLE_NAME.test(name)) {
        context.addIssue({
          code: 'custom',
          message: `The :attribute field has an invalid variable name "${name}": a lowercase letter, then up to 31 lowercase letters, digits or underscores.`,
        });
        continue;
      }
      const value = given[name];
      const issue = (message: string) =>
        context.addIssue({ code: 'custom', path: [name], message });
      if (typeof value !== 'string') issue('The :attribute field must be a string.');
      else if (!fitsCharacters(value, MAX_VARIABLE_LENGTH))
        issue(`The :attribute field must not be greater than ${MAX_VARIABLE_LENGTH} characters.`);
      else if (value.includes(OPT_OUT_PLACEHOLDER))
        issue(`The :attribute field must not contain ${OPT_OUT_PLACEHOLDER}.`);
    }
  })
  .meta({
    propertyNames: { pattern: VARIABLE_NAME.source },
    maxProperties: MAX_VARIABLES,
    additionalProperties: {
      type: 'string',
      maxLength: MAX_VARIABLE_LENGTH,
      // No NUL: the api refuses one in any string (server/http/input-guard.ts).
      pattern: NO_NUL.source,
    },
  });

export const personalizationField = optional(
  z.record(z.string(), variables, { error: NOT_AN_OBJECT }).meta({
    propertyNames: { pattern: E164.source },
    examples: [
      {
        '+61412345678': { first_name: 'Ada', order: 'A-1001' },
        '+61412345679': { first_name: 'Grace', order: 'A-1002' },
      },
    ],
  }),
  `Per-recipient variables for the message's {{name}} placeholders: each key one of the recipients, each value at most ${MAX_VARIABLES} string variables named [a-z][a-z0-9_]{0,31}. Every recipient needs a value for every placeholder the message uses (unused variables are ignored); each rendered text is 1 to ${MAX_MESSAGE_LENGTH.toLocaleString('en')} characters and is counted in segments on its own. Without this field, {{…}} is plain text`,
);

/** The field as read: its values are Variables once checkPersonalization found no fault. */
type Personalization = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** Each recipient's variables under its normalized number, with the key the request used. */
function entriesByRecipient(personalization: Personalization) {
  const entries = new Map<string, { key: string; variables: Variables }>();
  for (const [key, given] of Object.entries(personalization)) {
    const recipient = parseE164(key);
    if (recipient !== undefined && !entries.has(recipient))
      entries.set(recipient, { key, variables: given as Variables });
  }
  return entries;
}

/**
 * The rules between `personalization`, `recipients` and `message`, once each of them is valid on
 * its own (what the client fixes first is reported first).
 */
export function checkPersonalization(body: Record<string, unknown>, context: z.RefinementCtx) {
  const { personalization, recipients, message } = body;
  if (personalization === undefined || personalization === null) return;
  const fields = new Set(['recipients', 'message', 'personalization']);
  if (context.issues.some((issue) => fields.has(String(issue.path?.[0])))) return;
  const given = personalization as Personalization;
  const text = message as string;
  const report = (path: string[], reason: string) =>
    context.addIssue({ code: 'custom', path, message: reason });

  for (const placeholder of placeholdersIn(text).invalid)
    report(
      ['message'],
      `The :attribute field has ${placeholder}, which is not a variable name: use {{name}} with a lowercase letter, then up to 31 lowercase letters, digits or underscores.`,
    );

  const listed = new Set(recipients as string[]);
  const seen = new Set<string>();
  for (const key of Object.keys(given)) {
    const recipient = parseE164(key);
    if (recipient === undefined || !listed.has(recipient))
      report(['personalization', key], 'The :attribute field must be one of the recipients.');
    else if (seen.has(recipient))
      report(['personalization', key], 'The :attribute field repeats a recipient given before.');
    if (recipient !== undefined) seen.add(recipient);
  }

  const entries = entriesByRecipient(given);
  for (const recipient of recipients as string[]) {
    const entry = entries.get(recipient);
    const path = ['personalization', entry?.key ?? recipient];
    const values = entry?.variables ?? {};
    const missing = missingVariables(text, values);
    if (missing.length > 0) {
      const list = missing.map((name) => `{{${name}}}`).join(', ');
      report(path, `The :attribute field has no value for ${list}, used in the message.`);
      continue;
    }
    const rendered = renderPersonalized(text, values);
    if (!NOT_BLANK.test(rendered)) report(path, 'The :attribute field makes the message blank.');
    else if (!fitsCharacters(rendered, MAX_MESSAGE_LENGTH))
      report(
        path,
        `The :attribute field makes the message longer than ${MAX_MESSAGE_LENGTH} characters.`,
      );
  }
}

/**
 * Each recipient's text, by normalized number, when the message is personalised (the field is
 * given and the message has a placeholder); null otherwise: every recipient gets `message`.
 */
export function personalizedTexts(
  message: string,
  recipients: readonly string[],
  personalization: Personalization | null | undefined,
): ReadonlyMap<string, string> | null {
  if (!personalization || placeholdersIn(message).names.length === 0) return null;
  const entries = entriesByRecipient(personalization);
  return new Map(
    recipients.map((recipient) => [
      recipient,
      renderPersonalized(message, entries.get(recipient)?.variables ?? {}),
    ]),
  );
}

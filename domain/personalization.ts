/**
 * Personalised messages (docs/api.md "Personalisation"): `{{name}}` placeholders in a message, filled
 * in per recipient from a flat object of string variables. Rendering is one pass: a value is
 * inserted as it is, never read for placeholders itself. Pure, the one place that renders; the
 * send request validates every recipient's text with it and the campaign stores what it returns.
 */

export const MAX_VARIABLES = 20;
/** A variable's value: at most a whole message. */
export const MAX_VARIABLE_LENGTH = 1600;
export const VARIABLE_NAME = /^[a-z][a-z0-9_]{0,31}$/;
/** Anything between double braces; a placeholder when what is inside is a variable name. */
const BRACES = /\{\{([^{}]*)\}\}/g;

export type Variables = Readonly<Record<string, string>>;

/** The names a message's placeholders use, each once, and the `{{…}}` that are not names. */
export function placeholdersIn(message: string): { names: string[]; invalid: string[] } {
  const names = new Set<string>();
  const invalid = new Set<string>();
  for (const [whole, inside] of message.matchAll(BRACES)) {
    if (VARIABLE_NAME.test(inside as string)) names.add(inside as string);
    else invalid.add(whole);
  }
  return { names: [...names], invalid: [...invalid] };
}

/** The placeholders of `message` that `variables` has no value for, in the message's order. */
export function missingVariables(message: string, variables: Variables): string[] {
  return placeholdersIn(message).names.filter((name) => !Object.hasOwn(variables, name));
}

/** The message with each `{{name}}` replaced by its value; a name without one stays as written. */
export function renderPersonalized(message: string, variables: Variables): string {
  return message.replace(BRACES, (whole, inside: string) =>
    VARIABLE_NAME.test(inside) && Object.hasOwn(variables, inside)
      ? (variables[inside] as string)
      : whole,
  );
}

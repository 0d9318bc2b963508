/**
 * Rules the vendors' create fields share (providers/<vendor>/definition.ts). A refusal names
 * fields by reference, so each front end shows them by its own label; secrets (a Twilio auth
 * token, an SMPP password) are never echoed, not even in a refusal.
 */
import { z } from 'zod';
import {
  type ProviderFieldsInput,
  ProviderFieldsRefusal,
  refuse,
} from '../domain/provider-definition.js';

/** A field named inside a refusal. */
export const field = (name: string) => ({ field: name });

/** Alphanumeric sender id: up to 11 letters, digits or spaces, at least one letter. */
export const ALPHANUMERIC_SENDER = /^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/;

/** A text field trimmed; blank is missing. */
export function optionalText(input: ProviderFieldsInput, name: string): string | undefined {
  const text = input[name]?.trim();
  return text === undefined || text === '' ? undefined : text;
}

/** A text field that must be given: trimmed, refused when missing or blank. */
export function requiredText(input: ProviderFieldsInput, name: string): string {
  const text = optionalText(input, name);
  if (text === undefined) throw refuse`${field(name)} is required`;
  return text;
}

export function httpUrl(name: string, value: string): string {
  if (!z.url({ protocol: /^https?$/ }).safeParse(value).success)
    throw refuse`${field(name)} "${value}" is not an http(s) URL`;
  return value;
}

/**
 * Checks of separate fields, each refused on its own: `check` keeps a refusal and goes on,
 * `throwAny` throws the first with the others beside it (a form shows them all at once).
 */
export function fieldRefusals() {
  const refusals: ProviderFieldsRefusal[] = [];
  return {
    check<Value>(work: () => Value): Value | undefined {
      try {
        return work();
      } catch (error) {
        if (!(error instanceof ProviderFieldsRefusal)) throw error;
        refusals.push(error);
        return undefined;
      }
    },
    throwAny(): void {
      const [first, ...others] = refusals;
      if (first)
        throw new ProviderFieldsRefusal(
          [...first.parts],
          [...first.more, ...others.flatMap((other) => [other.parts, ...other.more])],
        );
    },
  };
}

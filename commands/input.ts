/**
 * How an admin use-case reads and refuses its input. Its message names input fields by reference, not by
 * text, so each front end shows them by its own label: the CLI as its options (`--api-enabled`),
 * a form as its field labels. Input fields arrive as a form gives them: text untrimmed and
 * possibly blank, numbers possibly NaN; the use-case owns every rule.
 */

import { z } from 'zod';
import { type ErrorCode, HeraldError } from '../domain/errors.js';
import { SLUG } from '../domain/request-schema.js';

/** A field of a use-case's input, named inside a message. */
export interface FieldRef {
  readonly field: string;
}

export type MessagePart = string | FieldRef;

const isField = (part: MessagePart): part is FieldRef => typeof part !== 'string';

function render(parts: readonly MessagePart[], label: (field: string) => string): string {
  return parts.map((part) => (isField(part) ? label(part.field) : part)).join('');
}

export class InputError extends HeraldError {
  readonly parts: readonly MessagePart[];
  /** The refusals this one lists (`refuseAll`): a form shows each under its own field. */
  readonly each: readonly InputError[];

  constructor(code: ErrorCode, parts: MessagePart[], each?: readonly InputError[]) {
    // By their input names where no front end labels them (an api answer, a log).
    const message = render(parts, (field) => field);
    const fieldErrors: Record<string, string[]> = {};
    const refusals: readonly { parts: readonly MessagePart[]; message: string }[] = each ?? [
      { parts, message },
    ];
    for (const refusal of refusals) {
      for (const field of new Set(refusal.parts.filter(isField).map((part) => part.field)))
        fieldErrors[field] = [...(fieldErrors[field] ?? []), refusal.message];
    }
    super(code, {
      message,
      ...(code === 'validation_failed' && Object.keys(fieldErrors).length > 0 && { fieldErrors }),
    });
    this.parts = parts;
    this.each = each ?? [this];
  }

  /** The message with each field shown by `label`. */
  render(label: (field: string) => string): string {
    return render(this.parts, label);
  }
}

type Interpolation = string | number | FieldRef | readonly MessagePart[];

function refusal(code: ErrorCode) {
  return (texts: TemplateStringsArray, ...values: Interpolation[]): InputError => {
    const parts: MessagePart[] = [];
    texts.forEach((text, index) => {
      parts.push(text);
      if (index >= values.length) return;
      const value = values[index] as Interpolation;
      if (Array.isArray(value)) parts.push(...(value as readonly MessagePart[]));
      else parts.push(typeof value === 'number' ? String(value) : (value as string | FieldRef));
    });
    return new InputError(code, parts);
  };
}

/** The input breaks a rule: `` invalid`${field('name')} must be at most 200 characters` ``. */
export const invalid = refusal('validation_failed');
/** The record the action is on does not exist. */
export const notFound = refusal('not_found');
/** The input is valid but the current state forbids the action (a taken slug, the last owner). */
export const conflict = refusal('conflict');

/**
 * Runs every check, so a form shows all its refusals at once, not one per submit: each check's
 * value, undefined where it refused; `done()` throws the refusals as one (joined by `; `).
 */
export function refuseAll() {
  const found: InputError[] = [];
  const kept = (error: unknown) => {
    if (!(error instanceof InputError)) throw error;
    found.push(...error.each);
    return undefined;
  };
  return {
    check<Value>(work: () => Value): Value | undefined {
      try {
        return work();
      } catch (error) {
        return kept(error);
      }
    },
    async checkAsync<Value>(work: () => Promise<Value>): Promise<Value | undefined> {
      try {
        return await work();
      } catch (error) {
        return kept(error);
      }
    },
    /** Whether a check refused so far (a later check that builds on an earlier may skip). */
    get refused() {
      return found.length > 0;
    },
    done(): void {
      if (found.length > 0) throw allOf(found);
    },
  };
}

/** Several refusals as one: its message joins theirs by `; `, a form lists `each`. */
export function allOf(refusals: readonly [InputError, ...InputError[]] | InputError[]): InputError {
  const [first] = refusals;
  if (!first) throw new Error('allOf needs a refusal');
  if (refusals.length === 1) return first;
  const parts = refusals.flatMap((refusal, index) =>
    index === 0 ? refusal.parts : ['; ', ...refusal.parts],
  );
  return new InputError(
    first.code,
    [...parts],
    refusals.flatMap((refusal) => refusal.each),
  );
}

/** Field references typed by the use-case's input: `const field = fieldsOf<Input>()`. */
export function fieldsOf<Input>() {
  return (field: keyof Input & string): FieldRef => ({ field });
}

/** `a, b and c`-style lists of fields inside a message, joined by `separator`. */
export function listOf(fields: readonly FieldRef[], separator = ', '): MessagePart[] {
  return fields.flatMap((field, index) => (index === 0 ? [field] : [separator, field]));
}

/** A text field trimmed; blank is missing. */
export function optionalText(value: string | undefined): string | undefined {
  const text = value?.trim();
  return text === undefined || text === '' ? undefined : text;
}

/** A text field that must be given: trimmed, refused when missing or blank. */
export function requiredText(value: string | undefined, field: FieldRef): string {
  const text = optionalText(value);
  if (text === undefined) throw invalid`${field} is required`;
  return text;
}

/** Postgres' unique_violation: the slug or name is taken. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505';
}

export function isEmail(value: string): boolean {
  return z.email().safeParse(value).success;
}

/** A provider's, route's or template's slug, refused unless it has a slug's shape. */
export function resourceSlug(slug: string, field: FieldRef): string {
  if (!SLUG.test(slug))
    throw invalid`${field} "${slug}" must be lowercase letters, digits, - or _ (at most 63)`;
  return slug;
}

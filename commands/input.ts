/**
 * How an admin use-case reads and refuses its input. Its message names input fields by reference, not by
 * text, so each front end shows them by its own label: the CLI as its options (`--api-enabled`),
 * a form as its field labels. Input fields arrive as a form gives them: text untrimmed and
 * possibly blank, numbers possibly NaN; the use-case owns every rule.
 */
import { z } from 'zod';
import { type ErrorCode, HeraldError } from '../domain/errors.js';

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

  constructor(code: ErrorCode, parts: MessagePart[]) {
    // By their input names where no front end labels them (an api answer, a log).
    const message = render(parts, (field) => field);
    const fields = [...new Set(parts.filter(isField).map((part) => part.field))];
    super(code, {
      message,
      ...(code === 'validation_failed' &&
        fields.length > 0 && {
          fieldErrors: Object.fromEntries(fields.map((field) => [field, [message]])),
        }),
    });
    this.parts = parts;
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

const RESOURCE_SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** A provider's, route's or template's slug, refused unless it has a slug's shape. */
export function resourceSlug(slug: string, field: FieldRef): string {
  if (!RESOURCE_SLUG.test(slug))
    throw invalid`${field} "${slug}" must be lowercase letters, digits, - or _ (at most 63)`;
  return slug;
}

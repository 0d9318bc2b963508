/**
 * Reading an admin command's options into a use-case's input, and its refusals into usage
 * errors. Options map to input fields by name: `--api-enabled` is `apiEnabled`.
 */
import { InputError } from '../../commands/input.js';
import { UsageError } from '../output.js';

export type Options = Record<string, string | boolean | undefined>;

export interface CommandResult {
  json: Record<string, unknown>;
  human: string;
  /** Non-zero when the command could not do all it was asked (a campaign saved but not dispatched). */
  exitCode?: number;
}

/** An option's text as given: the use-case trims it and refuses it when blank. */
export function text(options: Options, name: string): string | undefined {
  const value = options[name];
  return typeof value === 'string' ? value : undefined;
}

export function optional(options: Options, name: string): string | undefined {
  const value = options[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** `--enabled true|false`: absent when not given; another word is a usage error. */
export function booleanOption(options: Options, name: string): boolean | undefined {
  const value = optional(options, name);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false')
    throw new UsageError(`--${name} must be true or false, not "${value}"`);
  return value === 'true';
}

export function required(options: Options, name: string): string {
  const value = optional(options, name);
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}

/** `--abilities a,b`: its items as given; a blank option is not given. */
export function list(options: Options, name: string): string[] | undefined {
  return optional(options, name)?.split(',');
}

/** Like `list`, but `--permissions ""` is an empty list, not a missing option. */
export function listOrEmpty(options: Options, name: string): string[] | undefined {
  return text(options, name)?.split(',');
}

/** A whole-number option; NaN when it is not one, which the use-case's range refuses. */
export function wholeNumber(options: Options, name: string): number | undefined {
  const value = optional(options, name);
  if (value === undefined) return undefined;
  return /^\d+$/.test(value) ? Number(value) : Number.NaN;
}

/** `--id` of a record (`what`: "key", "invitation", ...): a positive integer. */
export function idOption(options: Options, what: string): number {
  const raw = required(options, 'id');
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(id) || id <= 0)
    throw new UsageError(`--id "${raw}" is not ${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what} id`);
  return id;
}

/** The option that gives an input field: `apiEnabled` → `--api-enabled`. */
export function optionOf(field: string): string {
  return `--${field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/**
 * Awaits a use-case; a refusal of its input becomes a usage error naming the options, one line
 * per refusal when it lists several.
 */
export async function run<T>(call: Promise<T>, label = optionOf): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof InputError)
      throw new UsageError(error.each.map((refusal) => refusal.render(label)).join('\n'));
    throw error;
  }
}

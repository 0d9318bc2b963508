import { InputError } from '../commands/input.js';

/**
 * The use-case's result, or its refusal (an InputError) for the page to show; any other error
 * still throws. `const created = await orRefusal(() => createX(…))`, then
 * `if (created instanceof InputError) return page(…)`.
 */
export async function orRefusal<Result>(work: () => Promise<Result>): Promise<Result | InputError> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
}

/** The refusal's message, each field reference shown by its label on this form. */
const labelled = (error: InputError, labels: Record<string, string>) =>
  error.render((field) => labels[field] ?? field);

/**
 * A use-case's refusals as inline form errors, all at once: each message under the field it
 * names first (else under `fallbackField`), each field reference shown by its label on this form.
 */
export function formErrors(
  error: InputError,
  labels: Record<string, string>,
  fallbackField: string,
): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const refusal of error.each) {
    const named = refusal.parts.find((part) => typeof part !== 'string');
    const field = typeof named === 'object' ? named.field : fallbackField;
    const message = labelled(refusal, labels);
    errors[field] = errors[field] === undefined ? message : `${errors[field]}; ${message}`;
  }
  return errors;
}

/** A refusal that concerns no field of a form (a missing record): the page's notice. */
export function noticeOf(error: InputError, labels: Record<string, string>): { notice: string } {
  return { notice: labelled(error, labels) };
}

import type { InputError } from '../commands/input.js';

/**
 * A use-case's refusal as inline form errors: the message under the field it names (else under
 * `fallbackField`), each field reference shown by its label on this form.
 */
export function formErrors(
  error: InputError,
  labels: Record<string, string>,
  fallbackField: string,
): Record<string, string> {
  const named = error.parts.find((part) => typeof part !== 'string');
  const field = typeof named === 'object' ? named.field : fallbackField;
  return { [field]: error.render((label) => labels[label] ?? label) };
}

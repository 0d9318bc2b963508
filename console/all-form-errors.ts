/**
 * Every refusal of a form's input as inline errors at once (commands/providers/refusals.ts): each
 * under the field it names (else under `fallbackField`), the first one for a field kept, each
 * field reference shown by its label on this form.
 */
import type { InputError } from '../commands/input.js';
import { refusalsOf } from '../commands/providers/refusals.js';

export function allFormErrors(
  error: InputError,
  labels: Record<string, string>,
  fallbackField: string,
): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const refusal of refusalsOf(error)) {
    const named = refusal.parts.find((part) => typeof part !== 'string');
    const field = typeof named === 'object' ? named.field : fallbackField;
    errors[field] ??= refusal.render((name) => labels[name] ?? name);
  }
  return errors;
}

/**
 * Admin use-cases refuse input with messages that name fields by reference: each front end
 * shows them by its own label, and the api sees them as a catalogued error with field errors.
 */
import { describe, expect, it } from 'vitest';
import { optionOf } from '../../cli/admin/options.js';
import {
  conflict,
  fieldsOf,
  invalid,
  listOf,
  notFound,
  requiredText,
} from '../../commands/input.js';
import { HeraldError } from '../../domain/errors.js';

const field = fieldsOf<{ name?: string; apiEnabled?: boolean; countries?: string[] }>();

describe('InputError', () => {
  it('renders its fields by the label a front end gives them', () => {
    const error = invalid`${field('countries')}: "${'XX'}" is not an ISO 3166 alpha-2 country code`;
    expect(error.render(optionOf)).toBe(
      '--countries: "XX" is not an ISO 3166 alpha-2 country code',
    );
    expect(error.render((name) => name.toUpperCase())).toBe(
      'COUNTRIES: "XX" is not an ISO 3166 alpha-2 country code',
    );
  });

  it('is a catalogued 422 with the message under each field it names', () => {
    const error = invalid`Give at least one of ${listOf([field('name'), field('apiEnabled')])}`;
    expect(error).toBeInstanceOf(HeraldError);
    expect([error.code, error.status, error.message]).toEqual([
      'validation_failed',
      422,
      'Give at least one of name, apiEnabled',
    ]);
    expect(error.fieldErrors).toEqual({
      name: ['Give at least one of name, apiEnabled'],
      apiEnabled: ['Give at least one of name, apiEnabled'],
    });
    expect(error.render(optionOf)).toBe('Give at least one of --name, --api-enabled');
  });

  it('keeps values as text even when they look like a field', () => {
    const error = notFound`No workspace has the slug "${'{name}'}"`;
    expect([error.status, error.render(() => 'LABEL'), error.fieldErrors]).toEqual([
      404,
      'No workspace has the slug "{name}"',
      undefined,
    ]);
    expect(conflict`taken`.status).toBe(409);
  });

  it('takes text as a form gives it: trimmed, blank is missing', () => {
    expect(requiredText('  Acme ', field('name'))).toBe('Acme');
    expect(() => requiredText('   ', field('name'))).toThrow('name is required');
    expect(() => requiredText(undefined, field('name'))).toThrow('name is required');
  });
});

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { validationError } from '../../domain/errors.js';
import { label } from '../../domain/validation.js';

/** Deeper than any body Herald reads (three levels), shallow enough that nothing recursing over it can overflow. */
export const MAX_INPUT_DEPTH = 32;

/**
 * Input no route can use, refused before any route sees it. NUL (U+0000) cannot be stored in a
 * Postgres text value, so it would otherwise surface as a database error; deep nesting would
 * overflow whatever walks it (the Idempotency-Key's request hash, zod). Its status is 400, so
 * every error handler (the app's, the authorization server's) answers it as a client error.
 */
export class UnacceptableInputError extends Error {
  readonly statusCode = 400;
  constructor(
    readonly field: string,
    readonly problem: 'nul' | 'depth',
  ) {
    super(
      problem === 'nul'
        ? 'The request contains a NUL character (U+0000), which Herald does not accept.'
        : `The request is nested more than ${MAX_INPUT_DEPTH} levels deep.`,
    );
  }

  /** The REST API's 422 for it, keyed by the field's dot path (`body` for the body itself). */
  toValidationError() {
    const field = this.field === '' ? 'body' : this.field;
    const message =
      this.problem === 'nul'
        ? `The ${label(field)} field must not contain a NUL character.`
        : `The ${label(field)} field is nested more than ${MAX_INPUT_DEPTH} levels deep.`;
    return validationError({ [field]: [message] });
  }
}

/** The first unacceptable value in parsed input, found without recursion. */
export function findUnacceptableInput(part: string, input: unknown): UnacceptableInputError | null {
  const pending: [path: string, value: unknown, depth: number][] = [[part, input, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [path, value, depth] = next;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return new UnacceptableInputError(path, 'nul');
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) return new UnacceptableInputError(path, 'depth');
    for (const [key, child] of Object.entries(value)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      if (key.includes('\u0000')) return new UnacceptableInputError(childPath, 'nul');
      pending.push([childPath, child, depth + 1]);
    }
  }
  return null;
}

function unacceptableInput(request: FastifyRequest): UnacceptableInputError | null {
  return (
    findUnacceptableInput('path', request.params) ??
    findUnacceptableInput('query', request.query) ??
    findUnacceptableInput('', request.body)
  );
}

/** Registered on the root instance before any route, so that it guards every route. */
export function guardInput(app: FastifyInstance) {
  app.addHook('preValidation', async (request) => {
    const problem = unacceptableInput(request);
    if (problem) throw problem;
  });
}

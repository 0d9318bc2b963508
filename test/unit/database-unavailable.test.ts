import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../../db/client.js';
import { isConnectionFailure } from '../../db/unavailable.js';

const withCode = (code: string) => Object.assign(new Error(code), { code });
const postgresError = (code: string) =>
  new postgres.PostgresError({ code, message: 'from the server' } as never);

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED')],
    ["postgres.js's connect timeout", withCode('CONNECT_TIMEOUT')],
    ['a connection closed under the query', withCode('CONNECTION_CLOSED')],
    ['a statement timeout', postgresError('57014')],
    ['Postgres shutting down', postgresError('57P01')],
    ['Postgres starting up', postgresError('57P03')],
    ['a connection exception (class 08)', postgresError('08006')],
    ['an idle transaction ended by the server', postgresError('25P03')],
    ['the pool refusing while Postgres is away', new DatabaseUnavailableError()],
    [
      'every address of a name refusing',
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
    ],
    ['a wrapped outage', new Error('lookup failed', { cause: withCode('ECONNRESET') })],
  ])('is true for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', postgresError('23505')],
    ['a syntax error', postgresError('42601')],
    ['a plain error', new Error('boom')],
    ['a string', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('is false for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('isConnectionFailure (Postgres is unreachable: calls stop queueing)', () => {
  it('is true when new connections cannot be made', () => {
    expect(isConnectionFailure(withCode('ECONNREFUSED'))).toBe(true);
    expect(isConnectionFailure(withCode('CONNECT_TIMEOUT'))).toBe(true);
    expect(isConnectionFailure(postgresError('57P03'))).toBe(true);
  });

  it('is false for one session ended or one slow statement', () => {
    expect(isConnectionFailure(withCode('CONNECTION_CLOSED'))).toBe(false);
    expect(isConnectionFailure(postgresError('57P01'))).toBe(false);
    expect(isConnectionFailure(postgresError('57014'))).toBe(false);
    expect(isConnectionFailure(new DatabaseUnavailableError('busy', 'POOL_TIMEOUT'))).toBe(false);
  });
});

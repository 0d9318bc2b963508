import postgres from 'postgres';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;

/** int8 ids fit in a JS number for any realistic table size; strings would leak into every API. */
const bigintAsNumber = {
  to: 20,
  from: [20],
  serialize: (value: number) => String(value),
  parse: (value: string) => Number(value),
};

export function createSql(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    transform: { column: { from: postgres.toCamel } },
    types: { bigint: bigintAsNumber },
    connection: { application_name: 'herald' },
  });
}

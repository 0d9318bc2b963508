import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';

type Io = 'input' | 'output';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * A tool's zod shape as the Standard Schema the MCP SDK takes, validating with zod and converted
 * to JSON Schema once per process. The server is built afresh for every request (it serves one
 * caller), and the SDK converts a tool's schemas on each new server, for `tools/list` and again
 * for every `tools/call` answer: for the report tools that conversion cost more than the call.
 * Frozen, so a shared conversion can never be changed by one request for the next.
 */
export function convertedOnce(shape: z.ZodRawShape): StandardSchemaWithJSON {
  const schema = z.object(shape);
  const standard = schema['~standard'];
  const converted = new Map<string, Record<string, unknown>>();
  const convert =
    (io: Io) =>
    (options: { target: string }): Record<string, unknown> => {
      const key = `${io} ${options.target}`;
      let json = converted.get(key);
      if (!json) {
        json = deepFreeze(standard.jsonSchema[io](options as never));
        converted.set(key, json);
      }
      return json;
    };
  return {
    '~standard': {
      ...standard,
      jsonSchema: { input: convert('input'), output: convert('output') },
    },
  } as StandardSchemaWithJSON;
}

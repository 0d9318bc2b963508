import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { searchAttributes } from '../workflows/definitions.js';

const IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;

/** `--search-attribute` flags for `temporal server start-dev`. */
export function devServerSearchAttributeFlags(): string[] {
  return Object.values(searchAttributes).flatMap((key) => [
    '--search-attribute',
    `${key.name}=${key.type === 'INT' ? 'Int' : 'Keyword'}`,
  ]);
}

/** Registers Herald's search attributes on a cluster that lacks them (idempotent). */
export async function ensureSearchAttributes(client: Client, namespace: string): Promise<void> {
  const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = Object.values(searchAttributes).filter((key) => !known.has(key.name));
  if (missing.length === 0) return;
  await client.connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((key) => [
        key.name,
        key.type === 'INT'
          ? IndexedValueType.INDEXED_VALUE_TYPE_INT
          : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
}

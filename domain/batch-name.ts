/**
 * What a batch is called in reports (docs/spec.md §2.5 types `name` as a string): the name given in the
 * dashboard or to a named campaign, else the send's own reference, else a readable default.
 */
export function batchName(batch: {
  id: number;
  name: string | null;
  reference: string | null;
  source: 'quick_send' | 'api' | null;
}): string {
  if (batch.name) return batch.name;
  if (batch.reference) return batch.reference;
  if (batch.source === 'quick_send') return `Quick Send #${batch.id}`;
  if (batch.source === 'api') return `API send #${batch.id}`;
  return `Batch #${batch.id}`;
}

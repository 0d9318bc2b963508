export type MessageStatus = 'accepted' | 'delivered' | 'undelivered';

export interface StoredMessage {
  id: string;
  to: string;
  from: string | null;
  body: string;
  reference: string;
  received_at: string;
  callback_url: string | null;
  /** The credential the submitter authenticated with: it signs the receipts. Never shown. */
  credential: string | null;
  status: MessageStatus;
  /** The undelivered receipt's error code; null otherwise. */
  error_code: string | null;
  /** When the receipt's status was set (the receipt's `at`); null while `accepted`. */
  status_at: string | null;
}

/** Public shape of an inbox entry. */
export function inboxView(m: StoredMessage) {
  return {
    id: m.id,
    to: m.to,
    from: m.from,
    body: m.body,
    reference: m.reference,
    received_at: m.received_at,
  };
}

/** Public shape of a status lookup entry. */
export function statusView(m: StoredMessage) {
  return { ...inboxView(m), status: m.status, error_code: m.error_code, status_at: m.status_at };
}

/**
 * In-memory inbox, capped: past `capacity` the oldest message is dropped. Messages are
 * indexed by `to` and by `reference`; every operation is O(1) or O(matches).
 */
export class MessageStore {
  /** Insertion-ordered, so the first key is always the oldest message. */
  #byId = new Map<string, StoredMessage>();
  #byTo = new Map<string, StoredMessage[]>();
  #byReference = new Map<string, StoredMessage[]>();

  constructor(readonly capacity = 100_000) {}

  get size(): number {
    return this.#byId.size;
  }

  add(message: StoredMessage): void {
    this.#byId.set(message.id, message);
    push(this.#byTo, message.to, message);
    push(this.#byReference, message.reference, message);
    while (this.#byId.size > this.capacity) this.#dropOldest();
  }

  /** Newest first; all messages when `to` is omitted. */
  inbox(to?: string): StoredMessage[] {
    const list = to === undefined ? [...this.#byId.values()] : [...(this.#byTo.get(to) ?? [])];
    return list.reverse();
  }

  /** Newest first. */
  byReference(reference: string): StoredMessage[] {
    return [...(this.#byReference.get(reference) ?? [])].reverse();
  }

  clear(): void {
    this.#byId.clear();
    this.#byTo.clear();
    this.#byReference.clear();
  }

  #dropOldest(): void {
    const oldest = this.#byId.values().next().value;
    if (!oldest) return;
    this.#byId.delete(oldest.id);
    // The globally oldest message is also the oldest in each of its index lists.
    shift(this.#byTo, oldest.to);
    shift(this.#byReference, oldest.reference);
  }
}

function push(index: Map<string, StoredMessage[]>, key: string, message: StoredMessage): void {
  const list = index.get(key);
  if (list) list.push(message);
  else index.set(key, [message]);
}

function shift(index: Map<string, StoredMessage[]>, key: string): void {
  const list = index.get(key);
  list?.shift();
  if (list?.length === 0) index.delete(key);
}

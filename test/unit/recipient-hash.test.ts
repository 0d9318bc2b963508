/**
 * An erased number's opt-out is stored as a keyed hash of the number (security/recipient-hash.ts):
 * written under the newest key of HERALD_SECRET's ring, found under every key of it, so a rotation
 * does not let a STOP lapse while the old key stays in the ring.
 */
import { describe, expect, it } from 'vitest';
import {
  erasedOptOutForms,
  erasedRecipient,
  erasedRecipientForms,
} from '../../security/recipient-hash.js';

const OLD = 'o'.repeat(32);
const NEW = 'n'.repeat(32);
const NUMBER = '+61412345678';

describe('erased recipients', () => {
  it('never holds the number, and differs per number and per key', () => {
    const form = erasedRecipient(OLD, NUMBER);
    expect(form).toMatch(/^erased:[A-Za-z0-9_-]{43}$/);
    expect(form).not.toContain('412345678');
    expect(erasedRecipient(OLD, '+61412345679')).not.toBe(form);
    expect(erasedRecipient(NEW, NUMBER)).not.toBe(form);
  });

  it('is written under the newest key of the ring and found under each of them', () => {
    const ring = `${NEW},${OLD}`;
    expect(erasedRecipient(ring, NUMBER)).toBe(erasedRecipient(NEW, NUMBER));
    expect(erasedRecipientForms(ring, NUMBER)).toEqual([
      erasedRecipient(NEW, NUMBER),
      erasedRecipient(OLD, NUMBER),
    ]);
  });

  it('maps a marketing send’s forms to their numbers, and a transactional send’s to none', () => {
    const forms = erasedOptOutForms(OLD, 'marketing', [NUMBER]);
    expect([...forms]).toEqual([[erasedRecipient(OLD, NUMBER), NUMBER]]);
    expect(erasedOptOutForms(OLD, 'transactional', [NUMBER]).size).toBe(0);
  });
});

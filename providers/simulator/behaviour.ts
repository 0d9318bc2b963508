import { z } from 'zod';

/** Longest timer we accept: setTimeout misbehaves past 2^31 ms, and tests never need more. */
const MAX_DELAY_MS = 600_000;

export const OUTCOMES = ['accept', 'reject', 'fail', 'timeout'] as const;
export const RECEIPT_OUTCOMES = ['delivered', 'undelivered', 'none'] as const;

/** error_code sent with an `undelivered` receipt when the rule does not name one. */
export const DEFAULT_UNDELIVERED_CODE = 'undeliverable';

export type Outcome = (typeof OUTCOMES)[number];
export type ReceiptOutcome = (typeof RECEIPT_OUTCOMES)[number];

export interface ReceiptRule {
  outcome: ReceiptOutcome;
  delay_ms: number;
  error_code: string | null;
}

export interface Rule {
  /** E.164 prefix ('+614'); '' is the global rule. */
  prefix: string;
  latency_ms: number;
  failure_rate: number;
  outcome: Outcome;
  timeout_ms: number;
  receipt: ReceiptRule;
}

const delayMs = z.int().min(0).max(MAX_DELAY_MS);

/** Body of `POST /v1/behaviour`. Unknown keys are rejected so typos do not pass silently. */
export const behaviourInput = z.strictObject({
  prefix: z
    .string()
    .regex(/^(\+\d{0,15})?$/, 'must be an E.164 prefix like "+614", or "" for global')
    .default(''),
  latency_ms: delayMs.optional(),
  failure_rate: z.number().min(0).max(1).optional(),
  outcome: z.enum(OUTCOMES).optional(),
  timeout_ms: delayMs.optional(),
  receipt: z
    .strictObject({
      outcome: z.enum(RECEIPT_OUTCOMES).optional(),
      delay_ms: delayMs.optional(),
      error_code: z.string().min(1).nullable().optional(),
    })
    .optional(),
});

export type BehaviourInput = z.infer<typeof behaviourInput>;

export function defaultRule(prefix = ''): Rule {
  return {
    prefix,
    latency_ms: 0,
    failure_rate: 0,
    outcome: 'accept',
    timeout_ms: 30_000,
    receipt: { outcome: 'delivered', delay_ms: 50, error_code: null },
  };
}

/**
 * Behaviour rules keyed by number prefix. A submission uses the rule with the longest
 * prefix matching its `to`, else the global rule. Setting a rule merges the given fields
 * onto the existing rule for that prefix (or onto the defaults for a new prefix).
 */
export class BehaviourRules {
  #rules = new Map<string, Rule>();
  /** Rules ordered longest prefix first; the global rule ('') is always last. */
  #ordered: Rule[] = [];

  constructor() {
    this.reset();
  }

  reset(): void {
    this.#rules = new Map([['', defaultRule()]]);
    this.#reorder();
  }

  set(input: BehaviourInput): Rule {
    const prefix = input.prefix ?? '';
    const base = this.#rules.get(prefix) ?? defaultRule(prefix);
    const rule: Rule = {
      prefix,
      latency_ms: input.latency_ms ?? base.latency_ms,
      failure_rate: input.failure_rate ?? base.failure_rate,
      outcome: input.outcome ?? base.outcome,
      timeout_ms: input.timeout_ms ?? base.timeout_ms,
      receipt: {
        outcome: input.receipt?.outcome ?? base.receipt.outcome,
        delay_ms: input.receipt?.delay_ms ?? base.receipt.delay_ms,
        error_code:
          input.receipt?.error_code === undefined
            ? base.receipt.error_code
            : input.receipt.error_code,
      },
    };
    this.#rules.set(prefix, rule);
    this.#reorder();
    return rule;
  }

  /** The rule that applies to a destination number. */
  resolve(to: string): Rule {
    for (const rule of this.#ordered) if (to.startsWith(rule.prefix)) return rule;
    // Unreachable: the global rule's '' prefix matches everything.
    return defaultRule();
  }

  /** All rules, global first, then by prefix. */
  list(): Rule[] {
    return [...this.#rules.values()].sort((a, b) => a.prefix.localeCompare(b.prefix));
  }

  #reorder(): void {
    this.#ordered = [...this.#rules.values()].sort((a, b) => b.prefix.length - a.prefix.length);
  }
}

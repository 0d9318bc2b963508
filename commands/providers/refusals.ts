/**
 * Every refusal of one input at once, for a form that shows them all: the use-case runs its
 * independent checks through `check` and throws at the end. What it throws reads as the first
 * refusal (the CLI prints that one); a form lists `refusals`.
 */
import { InputError } from '../input.js';

export class InputRefusals extends InputError {
  readonly refusals: readonly InputError[];

  constructor(refusals: readonly InputError[]) {
    const [first] = refusals as [InputError, ...InputError[]];
    super(first.code, [...first.parts]);
    this.refusals = refusals;
  }
}

/** The refusals in an error: several from InputRefusals, else the one. */
export const refusalsOf = (error: InputError): readonly InputError[] =>
  error instanceof InputRefusals ? error.refusals : [error];

export function refusalCollector() {
  const refusals: InputError[] = [];
  const kept = (error: unknown): undefined => {
    if (!(error instanceof InputError)) throw error;
    refusals.push(...refusalsOf(error));
    return undefined;
  };
  return {
    /** The check's value, or undefined when it refused (kept for `throwAny`). */
    check<Value>(work: () => Value): Value | undefined {
      try {
        return work();
      } catch (error) {
        return kept(error);
      }
    },
    /** `check` for a check that reads the database. */
    async checkAsync<Value>(work: () => Promise<Value>): Promise<Value | undefined> {
      try {
        return await work();
      } catch (error) {
        return kept(error);
      }
    },
    /** Throws what was refused, if anything. */
    throwAny(): void {
      if (refusals.length === 1) throw refusals[0];
      if (refusals.length > 1) throw new InputRefusals(refusals);
    },
  };
}

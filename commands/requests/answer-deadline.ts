import { HeraldError } from '../../domain/errors.js';

/** An answer written as it is: the JSON text and its status. */
export interface DeadlineAnswer {
  status: number;
  body: string;
}

/**
 * A request's deadline as a send sees it. A send answers within the deadline, and its answer
 * tells the truth: a 503 means nothing was saved. So the deadline answers its 503 only while the
 * send has committed nothing; from the moment the save's commit begins, the deadline gives the
 * answer the send left with it (the api implements this: api/request-deadline.ts).
 */
export interface AnswerDeadline {
  /** Epoch ms by which work that can answer for itself (`paused`, `pending`) stops waiting. */
  readonly answerBy: number;
  /**
   * Called in the save's transaction as its last step. Throws when the deadline has answered
   * already, which rolls the save back. From here until `saved` or `notSaved`, the deadline
   * answers `uncertain`: the commit may or may not happen.
   */
  saving(uncertain: DeadlineAnswer): void;
  /** The save committed: the deadline answers `answer` should the rest of the work outlast it. */
  saved(answer: DeadlineAnswer): void;
  /** The save rolled back: the deadline answers its 503 again. */
  notSaved(): void;
}

/** The request was answered (503, nothing saved) before its save could commit. */
export class DeadlinePassedError extends HeraldError {
  constructor() {
    super('service_unavailable');
  }
}

/** For callers without a deadline (CLI, tests): nothing ever answers in their place. */
export const NO_DEADLINE: AnswerDeadline = {
  answerBy: Number.POSITIVE_INFINITY,
  saving() {},
  saved() {},
  notSaved() {},
};

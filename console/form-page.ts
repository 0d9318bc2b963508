/**
 * A console page with a form, described once: its view, the data it loads, its form's labels and
 * where a refusal naming no field of the form goes. Its routes then say only what is their own:
 *
 * - `page.show(reply, 200, { flash })` draws it;
 * - `page.submit(reply, { run, done })` runs a use-case on the posted form; a refusal draws the
 *   page again with the form as posted and each refusal under its field (form-errors.ts);
 * - `page.act(reply, { run, done })` runs one on a record of the page (delete, revoke); a
 *   refusal is the page's notice;
 * - `page.found(reply, lookup)` is the record the URL names, or the page's notice that there is
 *   none; `page.notice(reply, refusal)` shows any other refusal so.
 *
 * The member is the one console/doors.ts signed in for the reply's request.
 */
import type { FastifyReply } from 'fastify';
import { InputError } from '../commands/input.js';
import { formErrors, noticeOf, orRefusal } from './form-errors.js';
import type { SignedIn } from './guard.js';
import { type Form, formOf } from './http.js';

/** What a form page shows besides its own data. */
interface Shown<Fields = Form> {
  /** The form's fields: as posted after a refusal; absent, as the page first shows them. */
  form?: Fields;
  /** Refusals by the form field they stand under; `notice` is the page's alert. */
  errors?: Record<string, string>;
  flash?: string;
}

/** The view's data: its title, what it lists and offers, and `form`, the fields as first shown. */
type PageData<Fields> = { title: string; form?: Fields } & Record<string, unknown>;

interface FormPageSpec<State, Fields> {
  view: string;
  /** The form's label of each use-case input field, for the messages that name it. */
  labels?: Record<string, string>;
  /** Where a refusal naming no field of the form stands; `notice` (the default): the page's alert. */
  fallbackField?: string | ((state: State) => string);
  load(signedIn: SignedIn, state: State): Promise<PageData<Fields>>;
  /**
   * The posted form as the page shows it again after a refusal (trimmed, credentials blanked);
   * without it, as posted. A page whose fields are not a `Form` has one.
   */
  shownAgain?(form: Form, state: State): Fields;
}

/**
 * The page's own state (the record it edits, the secret it shows once) and what it shows; may be
 * left out where the page needs no state.
 */
type StateArgument<State, Fields> =
  Partial<State> extends State ? [state?: State & Shown<Fields>] : [state: State & Shown<Fields>];
type WithState<State> = Partial<State> extends State ? { state?: State } : { state: State };

type Answer = FastifyReply | Promise<FastifyReply>;

/** A form's use-case: `run` it on the posted form; `done` answers its result. */
type Submission<State, Result> = WithState<State> & {
  run(form: Form, signedIn: SignedIn): Promise<Result>;
  done(result: Result, signedIn: SignedIn): Answer;
};

/** A use-case on a record of the page, with no form of its own to show again. */
type Action<State, Result> = WithState<State> & {
  run(signedIn: SignedIn): Promise<Result>;
  done(result: Result, signedIn: SignedIn): Answer;
};

export function formPage<State extends object = Record<never, never>, Fields = Form>(
  spec: FormPageSpec<State, Fields>,
) {
  const labels = spec.labels ?? {};
  const fallbackOf = (state: State) =>
    typeof spec.fallbackField === 'function'
      ? spec.fallbackField(state)
      : (spec.fallbackField ?? 'notice');
  const stateOf = (state: State | undefined) => (state ?? {}) as State & Shown<Fields>;

  /** The page with its own state and what it shows: errors, the form as given, a flash. */
  async function draw(reply: FastifyReply, status: number, state: State & Shown<Fields>) {
    const { form, ...data } = await spec.load(reply.request.member, state);
    return reply.page(
      spec.view,
      { ...data, form: state.form ?? form ?? {}, errors: state.errors ?? {}, flash: state.flash },
      status,
    );
  }

  /** The page with the refusal as its notice: it concerns no field of a form (a missing record). */
  const notice = (
    reply: FastifyReply,
    refusal: InputError,
    state: State & Shown<Fields>,
    status = refusal.status,
  ) => draw(reply, status, { ...state, errors: noticeOf(refusal, labels) });

  return {
    show: (reply: FastifyReply, status: number, ...[state]: StateArgument<State, Fields>) =>
      draw(reply, status, stateOf(state)),

    notice: (reply: FastifyReply, refusal: InputError, ...[state]: StateArgument<State, Fields>) =>
      notice(reply, refusal, stateOf(state)),

    async submit<Result>(reply: FastifyReply, submission: Submission<State, Result>) {
      const signedIn = reply.request.member;
      const form = formOf(reply.request);
      const result = await orRefusal(() => submission.run(form, signedIn));
      if (!(result instanceof InputError)) return submission.done(result, signedIn);
      // The page again, the form as posted, each refusal under the field it names.
      const state = stateOf(submission.state);
      return draw(reply, result.status, {
        ...state,
        form: spec.shownAgain ? spec.shownAgain(form, state) : (form as Fields),
        errors: formErrors(result, labels, fallbackOf(state)),
      });
    },

    async act<Result>(reply: FastifyReply, action: Action<State, Result>) {
      const signedIn = reply.request.member;
      const result = await orRefusal(() => action.run(signedIn));
      if (result instanceof InputError) return notice(reply, result, stateOf(action.state));
      return action.done(result, signedIn);
    },

    /**
     * What `lookup` finds of the record the URL names; undefined once the page (one that needs
     * no state) has answered, with `status` (else the refusal's), that there is none.
     */
    async found<Found>(
      reply: FastifyReply,
      lookup: (signedIn: SignedIn) => Promise<Found>,
      status?: number,
    ): Promise<Found | undefined> {
      const result = await orRefusal(() => lookup(reply.request.member));
      if (!(result instanceof InputError)) return result;
      await notice(reply, result, stateOf(undefined), status);
      return undefined;
    },
  };
}

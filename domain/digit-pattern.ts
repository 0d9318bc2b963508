/**
 * A numbering plan's digit patterns (libphonenumber's metadata) as automata, to ask of a pattern
 * whether the digits after a prefix can still change its answer (domain/number-plan.ts). Pure.
 *
 * Only the syntax the metadata uses is read: digits, `\d`, `[…]` of digits and ranges, groups
 * (`(…)`, `(?:…)`), `|`, and the greedy quantifiers `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`.
 * Anything else (`$`, a lazy quantifier, a letter) makes the pattern unreadable: its caller then
 * decides nothing from it. Matching `^(?:p)$` or `^(?:p)` with such a pattern is membership in its
 * language, so an automaton answers exactly what the RegExp does.
 */

/** Every digit: a set of digits is a 10-bit mask. */
const ANY_DIGIT = 0b11_1111_1111;

type Node =
  | { kind: 'digits'; mask: number }
  | { kind: 'alternatives'; branches: Node[][] }
  | { kind: 'repeat'; node: Node; min: number; max: number };

class Unreadable extends Error {}

/**
 * A question needed more new positions than one question may make (MAX_NEW_PER_QUESTION), or
 * than all patterns may hold (MAX_POSITIONS): it is answered `some`, which decides nothing.
 */
class TooLarge extends Error {}

/** Reads a pattern into alternatives of sequences; throws Unreadable outside the subset. */
function read(source: string): Node {
  let at = 0;
  const peek = () => source[at];
  const digitAt = (index: number) => {
    const code = source.charCodeAt(index) - 48;
    if (!(code >= 0 && code <= 9)) throw new Unreadable();
    return code;
  };

  function alternatives(): Node {
    const branches: Node[][] = [sequence()];
    while (peek() === '|') {
      at++;
      branches.push(sequence());
    }
    return { kind: 'alternatives', branches };
  }

  function sequence(): Node[] {
    const nodes: Node[] = [];
    while (at < source.length && peek() !== '|' && peek() !== ')') nodes.push(quantified(atom()));
    return nodes;
  }

  function atom(): Node {
    const char = source[at++];
    if (char === '(') {
      if (source.startsWith('?:', at)) at += 2;
      const inner = alternatives();
      if (source[at++] !== ')') throw new Unreadable();
      return inner;
    }
    if (char === '\\') {
      if (source[at++] !== 'd') throw new Unreadable();
      return { kind: 'digits', mask: ANY_DIGIT };
    }
    if (char === '[') return digitClass();
    return { kind: 'digits', mask: 1 << digitAt(at - 1) };
  }

  function digitClass(): Node {
    let mask = 0;
    while (peek() !== ']') {
      if (at >= source.length) throw new Unreadable();
      const from = digitAt(at++);
      if (peek() === '-' && source[at + 1] !== ']') {
        const to = digitAt(at + 1);
        at += 2;
        for (let digit = from; digit <= to; digit++) mask |= 1 << digit;
      } else mask |= 1 << from;
    }
    at++;
    return { kind: 'digits', mask };
  }

  function quantified(node: Node): Node {
    const char = peek();
    let bounds: [number, number] | undefined;
    if (char === '?') bounds = [0, 1];
    else if (char === '*') bounds = [0, Infinity];
    else if (char === '+') bounds = [1, Infinity];
    else if (char === '{') {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at));
      if (!match) throw new Unreadable();
      const min = Number(match[1]);
      const max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
      at += match[0].length - 1;
      bounds = [min, max];
    }
    if (!bounds) return node;
    at++;
    // A lazy quantifier matches the same language, but it is not in the metadata: refuse it.
    if (peek() === '?') throw new Unreadable();
    return { kind: 'repeat', node, min: bounds[0], max: bounds[1] };
  }

  const tree = alternatives();
  if (at !== source.length) throw new Unreadable();
  return tree;
}

/** A Thompson automaton: each state has free moves and at most one move on a set of digits. */
interface Automaton {
  free: number[][];
  mask: number[];
  next: number[];
  start: number;
  accept: number;
}

function build(tree: Node): Automaton {
  const automaton: Automaton = { free: [], mask: [], next: [], start: 0, accept: 0 };
  const state = () => {
    automaton.free.push([]);
    automaton.mask.push(0);
    automaton.next.push(-1);
    return automaton.free.length - 1;
  };
  const link = (from: number, to: number) => automaton.free[from]?.push(to);

  /** A fragment from `start` to `end`; `end` has no moves yet. */
  function fragment(node: Node): [number, number] {
    const start = state();
    const end = state();
    if (node.kind === 'digits') {
      automaton.mask[start] = node.mask;
      automaton.next[start] = end;
    } else if (node.kind === 'alternatives') {
      for (const branch of node.branches) {
        let tail = start;
        for (const part of branch) {
          const [partStart, partEnd] = fragment(part);
          link(tail, partStart);
          tail = partEnd;
        }
        link(tail, end);
      }
    } else {
      let tail = start;
      for (let copy = 0; copy < node.min; copy++) {
        const [partStart, partEnd] = fragment(node.node);
        link(tail, partStart);
        tail = partEnd;
      }
      if (node.max === Infinity) {
        const [partStart, partEnd] = fragment(node.node);
        link(tail, partStart);
        link(partEnd, partStart);
        link(partEnd, end);
      } else {
        for (let copy = node.min; copy < node.max; copy++) {
          const [partStart, partEnd] = fragment(node.node);
          link(tail, partStart);
          link(tail, end);
          tail = partEnd;
        }
      }
      link(tail, end);
    }
    return [start, end];
  }

  [automaton.start, automaton.accept] = fragment(tree);
  return automaton;
}

/** What a pattern answers over every way of finishing a number: never, for some, or always. */
export type Outcome = 'none' | 'some' | 'all';

interface Closure {
  moving: number[];
  accepts: boolean;
}

/** A set of states reached after some digits, with its successors and outcomes worked out once. */
interface Position {
  states: number[];
  accepts: boolean;
  successors?: (Position | undefined)[];
  /** Outcome by remaining digit count, matched entirely / matched by a prefix. */
  whole: Outcome[];
  prefix: Outcome[];
}

/**
 * Positions all patterns together may hold (a few hundred bytes each); past it, a question that
 * needs a new one is answered `some` (decides nothing), so memory stays bounded.
 */
const MAX_POSITIONS = 200_000;
let positionsHeld = 0;

/**
 * New positions one question may make: a short prefix of a long pattern can reach thousands,
 * and a longer prefix answers the same question for far less.
 */
const MAX_NEW_PER_QUESTION = 400;
let questionBudget = 0;

/**
 * A pattern read once, asked many times. `full`: the RegExp `^(?:p)$` over the whole national
 * number; `prefix`: `^(?:p)`, a match at the start (leading digits, the national prefix).
 */
export class DigitPattern {
  private readonly positions = new Map<string, Position>();
  private readonly closures: (Closure | undefined)[] = [];
  /** Marks of the states met while a position is worked out (`stamp` tells one from the next). */
  private readonly seen: Int32Array;
  private stamp = 0;
  private readonly begin: Position;

  private constructor(private readonly automaton: Automaton) {
    this.seen = new Int32Array(automaton.free.length);
    questionBudget = 1;
    this.begin = this.position([automaton.start]);
  }

  /** Undefined when the pattern uses syntax outside the subset the metadata uses. */
  static compile(source: string): DigitPattern | undefined {
    try {
      return new DigitPattern(build(read(source)));
    } catch (error) {
      if (error instanceof Unreadable || error instanceof TooLarge) return undefined;
      throw error;
    }
  }

  /**
   * Over every string of `remaining` more digits after `digits`: whether the pattern matches
   * the whole (`full`) or a prefix of it (`prefix`) never, for some, or always.
   */
  outcome(mode: 'full' | 'prefix', digits: string, remaining: number): Outcome {
    questionBudget = MAX_NEW_PER_QUESTION;
    try {
      return this.after(mode, digits, remaining);
    } catch (error) {
      if (error instanceof TooLarge) return 'some';
      throw error;
    }
  }

  private after(mode: 'full' | 'prefix', digits: string, remaining: number): Outcome {
    let position: Position | undefined = this.begin;
    for (let index = 0; index < digits.length; index++) {
      if (mode === 'prefix' && position.accepts) return 'all';
      position = this.successor(position, digits.charCodeAt(index) - 48);
      if (!position) return 'none';
    }
    return this.ahead(mode, position, remaining);
  }

  private ahead(mode: 'full' | 'prefix', position: Position, remaining: number): Outcome {
    if (mode === 'prefix' && position.accepts) return 'all';
    if (remaining === 0) return position.accepts ? 'all' : 'none';
    const known = (mode === 'full' ? position.whole : position.prefix)[remaining];
    if (known) return known;
    let outcome: Outcome | undefined;
    for (let digit = 0; digit <= 9 && outcome !== 'some'; digit++) {
      const next = this.successor(position, digit);
      const answer = next ? this.ahead(mode, next, remaining - 1) : 'none';
      outcome = outcome === undefined || outcome === answer ? answer : 'some';
    }
    const result = outcome ?? 'none';
    (mode === 'full' ? position.whole : position.prefix)[remaining] = result;
    return result;
  }

  /** The position after one more digit; undefined when no state survives it. */
  private successor(position: Position, digit: number): Position | undefined {
    position.successors ??= new Array(10);
    if (digit in position.successors) return position.successors[digit];
    const { mask, next } = this.automaton;
    const bit = 1 << digit;
    const moved: number[] = [];
    for (const state of position.states) {
      if ((mask[state] ?? 0) & bit) moved.push(next[state] ?? -1);
    }
    const successor = moved.length > 0 ? this.position(moved) : undefined;
    position.successors[digit] = successor;
    return successor;
  }

  /** The states with a digit move that `state` reaches by free moves, and whether it may end. */
  private closure(state: number): Closure {
    const known = this.closures[state];
    if (known) return known;
    const { free, mask, accept } = this.automaton;
    const closure: Closure = { moving: [], accepts: false };
    const reached = new Set<number>();
    const pending = [state];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      if (reached.has(next)) continue;
      reached.add(next);
      if (next === accept) closure.accepts = true;
      if (mask[next]) closure.moving.push(next);
      pending.push(...(free[next] ?? []));
    }
    this.closures[state] = closure;
    return closure;
  }

  /** The position of the states `from` reach by free moves; only moving states tell it apart. */
  private position(from: number[]): Position {
    const stamp = ++this.stamp;
    const states: number[] = [];
    let accepts = false;
    for (const state of from) {
      const closure = this.closure(state);
      accepts ||= closure.accepts;
      for (const moving of closure.moving) {
        if (this.seen[moving] === stamp) continue;
        this.seen[moving] = stamp;
        states.push(moving);
      }
    }
    states.sort((a, b) => a - b);
    const key = `${states.join(',')}${accepts ? '.' : ''}`;
    const known = this.positions.get(key);
    if (known) return known;
    if (positionsHeld >= MAX_POSITIONS || questionBudget <= 0) throw new TooLarge();
    positionsHeld++;
    questionBudget--;
    const created: Position = { states, accepts, whole: [], prefix: [] };
    this.positions.set(key, created);
    return created;
  }
}

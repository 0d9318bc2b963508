/**
 * The admin command table: each resource file (cli/admin/<resource>.ts) lists its commands
 * with their options, once. The parser takes the options from here, and `herald help` prints
 * the usage generated from the same entries.
 */
import type { AdminContext } from '../context.js';
import type { CommandResult, Options } from './options.js';

/** An option as usage shows it: `--name <value>`; without a value it is a flag. */
export interface OptionSpec {
  name: string;
  /** How usage shows its value (`<slug>`, `true|false`); absent: a flag. */
  value?: string;
  required?: boolean;
}

/**
 * One item of a usage line: an option; options of which one may be given (`[--a <x> | --b <y>]`,
 * each alternative one or more options); options shown under one label (`[any option of create]`);
 * or text.
 */
export type UsageItem =
  | OptionSpec
  | { oneOf: readonly (readonly OptionSpec[])[] }
  | { label: string; options: readonly OptionSpec[] }
  | { text: string };

/** A command's synopsis, line by line as usage wraps it. */
export type Synopsis = readonly (readonly UsageItem[])[];

export interface AdminCommand {
  /** `workspace create`, `mcp connections list`. */
  name: string;
  run: (context: AdminContext, options: Options) => Promise<CommandResult>;
  /**
   * Its forms (most have one; `provider create` one per type). Commands that follow each other
   * with the same synopses, the same object, share a usage line: `provider enable|disable`.
   */
  synopses: readonly Synopsis[];
  /** Shown after the synopsis, in the right-hand column. */
  summary?: string;
}

export const required = (name: string, value: string): OptionSpec => ({
  name,
  value,
  required: true,
});
export const optional = (name: string, value: string): OptionSpec => ({ name, value });
export const flag = (name: string): OptionSpec => ({ name });
export const oneOf = (...alternatives: (OptionSpec | OptionSpec[])[]): UsageItem => ({
  oneOf: alternatives.map((alternative) =>
    Array.isArray(alternative) ? alternative : [alternative],
  ),
});
export const text = (words: string): UsageItem => ({ text: words });

const isOption = (item: UsageItem): item is OptionSpec => 'name' in item;

function optionsOfItem(item: UsageItem): readonly OptionSpec[] {
  if (isOption(item)) return [item];
  if ('oneOf' in item) return item.oneOf.flat();
  if ('options' in item) return item.options;
  return [];
}

/** Every option a command takes, each once, in the order its usage shows them. */
export function optionsOf(command: Pick<AdminCommand, 'synopses'>): OptionSpec[] {
  const byName = new Map<string, OptionSpec>();
  for (const item of command.synopses.flat(2))
    for (const option of optionsOfItem(item))
      if (!byName.has(option.name)) byName.set(option.name, option);
  return [...byName.values()];
}

const shown = (option: OptionSpec) =>
  option.value === undefined ? `--${option.name}` : `--${option.name} ${option.value}`;

function renderItem(item: UsageItem): string {
  if (isOption(item)) return item.required ? shown(item) : `[${shown(item)}]`;
  if ('oneOf' in item)
    return `[${item.oneOf.map((alternative) => alternative.map(shown).join(' ')).join(' | ')}]`;
  if ('options' in item) return `[${item.label}]`;
  return item.text;
}

/** Where a summary starts on its line. */
const SUMMARY_COLUMN = 52;

/** The usage lines of `commands`, in order, those sharing a synopsis merged as `a enable|disable`. */
export function usageOf(commands: readonly AdminCommand[]): string {
  const lines: string[] = [];
  for (let index = 0; index < commands.length; index++) {
    const command = commands[index] as AdminCommand;
    const [resource] = command.name.split(' ');
    const verbs = [command.name.slice((resource as string).length + 1)];
    while (commands[index + 1]?.synopses === command.synopses) {
      index++;
      const next = commands[index] as AdminCommand;
      verbs.push(next.name.slice((resource as string).length + 1));
    }
    const prefix = `  ${resource} ${verbs.join('|')} `;
    for (const synopsis of command.synopses) {
      synopsis.forEach((items, lineIndex) => {
        const start = lineIndex === 0 ? prefix : ' '.repeat(prefix.length);
        lines.push(`${start}${items.map(renderItem).join(' ')}`.trimEnd());
      });
    }
    if (command.summary) {
      const last = lines.pop() as string;
      lines.push(`${last.padEnd(SUMMARY_COLUMN - 1)} ${command.summary}`);
    }
  }
  return lines.map((line) => `${line}\n`).join('');
}

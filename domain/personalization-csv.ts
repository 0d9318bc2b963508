/**
 * A personalisation CSV (the console's Create campaign import, `herald campaign create
 * --variables`): a header row, then one row per recipient; the first column is the number, each
 * other column a variable named by its header. Read as RFC 4180 (commas, double-quoted fields
 * with "" for a quote, CRLF or LF); blank lines are skipped. Pure.
 */
import { MAX_VARIABLES, VARIABLE_NAME } from './personalization.js';

export type PersonalizationCsv =
  | {
      ok: true;
      /** The first column, as written (the send's rules normalize and check each). */
      recipients: string[];
      /** Each row's variables by its number as written. */
      personalization: Record<string, Record<string, string>>;
    }
  | { ok: false; error: string };

/** The rows of a CSV text, or the line where a quoted field is left open. */
export function parseCsv(text: string): { rows: string[][] } | { openQuoteLine: number } {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let quoteLine = 0;
  const source = text.replace(/^\uFEFF/, '');
  const endRow = () => {
    row.push(field);
    if (row.length > 1 || row[0]?.trim() !== '') rows.push(row);
    row = [];
    field = '';
  };
  for (let index = 0; index < source.length; index++) {
    const character = source[index] as string;
    if (quoted) {
      if (character === '"' && source[index + 1] === '"') {
        field += '"';
        index++;
      } else if (character === '"') quoted = false;
      else {
        if (character === '\n') line++;
        field += character;
      }
    } else if (character === '"' && field.trim() === '') {
      field = '';
      quoted = true;
      quoteLine = line;
    } else if (character === ',') {
      row.push(field);
      field = '';
    } else if (character === '\n' || character === '\r') {
      if (character === '\r' && source[index + 1] === '\n') index++;
      endRow();
      line++;
    } else field += character;
  }
  if (quoted) return { openQuoteLine: quoteLine };
  if (field !== '' || row.length > 0) endRow();
  return { rows };
}

/** Reads a personalisation CSV; the error says what to fix, and where. */
export function readPersonalizationCsv(text: string): PersonalizationCsv {
  const parsed = parseCsv(text);
  if ('openQuoteLine' in parsed)
    return { ok: false, error: `line ${parsed.openQuoteLine} opens a quote it never closes` };
  const [header, ...rows] = parsed.rows;
  if (!header || rows.length === 0)
    return { ok: false, error: 'needs a header row, then one row per recipient' };
  const names = header.slice(1).map((name) => name.trim());
  if (names.length > MAX_VARIABLES)
    return { ok: false, error: `has ${names.length} variable columns; at most ${MAX_VARIABLES}` };
  const invalid = names.find((name) => !VARIABLE_NAME.test(name));
  if (invalid !== undefined)
    return {
      ok: false,
      error: `column "${invalid}" is not a variable name: a lowercase letter, then up to 31 lowercase letters, digits or underscores`,
    };
  if (new Set(names).size < names.length)
    return { ok: false, error: 'names a variable column twice' };
  const recipients: string[] = [];
  const personalization: Record<string, Record<string, string>> = {};
  for (const [index, row] of rows.entries()) {
    if (row.length !== header.length)
      return {
        ok: false,
        error: `row ${index + 2} has ${row.length} columns; the header has ${header.length}`,
      };
    const recipient = (row[0] as string).trim();
    recipients.push(recipient);
    personalization[recipient] = Object.fromEntries(
      names.map((name, column) => [name, row[column + 1] as string]),
    );
  }
  return { ok: true, recipients, personalization };
}

/** A mistake in how the command was called: shown with the command's usage, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Prints the result: exactly one JSON object with --json, readable lines otherwise. */
export function printResult(json: boolean, result: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${human}\n`);
}

export function printError(json: boolean, error: Error): void {
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ error: { type: error.name, message: error.message } })}\n`,
    );
  } else {
    // Each line of the message on its own line (a refusal of several options: one per refusal).
    for (const line of error.message.split('\n')) process.stderr.write(`herald: ${line}\n`);
  }
}

/**
 * Rows under a header, each column as wide as its widest cell, two spaces apart: what every
 * `list` command prints without --json. Cells are printed as given (a null shows as `-`).
 */
type Cell = string | number | null;

export function formatTable(header: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const cells = [header, ...rows].map((row) =>
    row.map((cell) => (cell === null ? '-' : String(cell))),
  );
  const widths = header.map((_, column) =>
    Math.max(...cells.map((row) => (row[column] ?? '').length)),
  );
  return cells
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A `list` command's text: a row of `items` each, under `header`; `empty` when there are none. */
export function listing<Item>(
  items: readonly Item[],
  header: readonly string[],
  row: (item: Item) => readonly Cell[],
  empty: string,
): string {
  return items.length ? formatTable(header, items.map(row)) : empty;
}

/** A time as tables show it: UTC to the second, `2026-11-27 15:04:05`. */
export const tableTime = (time: Date | null): string | null =>
  time ? time.toISOString().slice(0, 19).replace('T', ' ') : null;

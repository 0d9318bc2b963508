/**
 * For exact expectations of a `list` table whose cells vary between runs (ids, times): a column
 * padded to its widest cell, header included, then the two spaces between columns.
 */
export function columnOf(header: string, ...cells: unknown[]): (cell: unknown) => string {
  const width = Math.max(header.length, ...cells.map((cell) => String(cell).length));
  return (cell) => `${String(cell).padEnd(width)}  `;
}

export const idColumn = (...ids: unknown[]) => columnOf('ID', ...ids);

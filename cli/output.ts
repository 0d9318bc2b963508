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
    process.stderr.write(`herald: ${error.message}\n`);
  }
}

/**
 * Searching logs for the secrets a run made (issue 24 item 4): API keys, invitation and opt-out
 * tokens, passwords, OTP codes. A secret counts as found in every form a log line may hold it in:
 * as is, URL-encoded (a path or a query value), form-encoded (spaces as `+`) and JSON-escaped.
 * A secret of digits only (an OTP code) counts only where no digit or decimal point is next to
 * it, so that a port, a pid or a duration's decimals do not hold it by chance.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface LogSecret {
  /** What it is, for the report: `invitation token`, `password`… */
  kind: string;
  value: string;
}

export interface SecretFound {
  kind: string;
  /** The file (or the name given to a text) and the 1-based line holding it. */
  file: string;
  line: number;
  /** The line, with every form of the secret replaced by `<kind>`, cut to 300 characters. */
  excerpt: string;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every form of `value` a log line may hold, as one pattern. */
function patternOf(value: string): RegExp {
  const forms = new Set([
    value,
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
  ]);
  const alternatives = [...forms].map(escapeRegExp).join('|');
  return /^\d+$/.test(value)
    ? new RegExp(`(?<![\\d.])(?:${alternatives})(?![\\d])`, 'g')
    : new RegExp(alternatives, 'g');
}

/** The lines of `text` that hold any of `secrets` (one finding per secret and line). */
export function findSecretsInText(
  text: string,
  secrets: LogSecret[],
  file = '<text>',
): SecretFound[] {
  const found: SecretFound[] = [];
  const lines = text.split('\n');
  for (const secret of secrets) {
    if (secret.value === '') throw new Error(`The ${secret.kind} to search for is empty`);
    const pattern = patternOf(secret.value);
    lines.forEach((line, index) => {
      if (!line.match(pattern)) return;
      const excerpt = line.replace(pattern, `<${secret.kind}>`).slice(0, 300);
      found.push({ kind: secret.kind, file, line: index + 1, excerpt });
    });
  }
  return found;
}

/** Every regular file under `dir`, at any depth, searched as text for `secrets`, by path. */
export async function findSecretsInLogDirectory(
  dir: string,
  secrets: LogSecret[],
): Promise<SecretFound[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const paths = entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  const found: SecretFound[] = [];
  for (const path of paths)
    found.push(...findSecretsInText(await readFile(path, 'utf8'), secrets, path));
  return found;
}

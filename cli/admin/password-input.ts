/**
 * A password for an admin command, read from standard input, never from argv (every user of the
 * host sees a process's arguments in `ps`). At a terminal it is asked for twice without echo;
 * piped (`printf '%s\n' "$pw" | herald user set-password …`), the first line is the password.
 */
import { createInterface } from 'node:readline';
import { UsageError } from '../output.js';

/** One line typed at the terminal, echoed as nothing. */
async function ask(question: string): Promise<string> {
  const lines = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const muted = lines as unknown as { _writeToOutput: (text: string) => void };
  const original = muted._writeToOutput.bind(lines);
  muted._writeToOutput = (text) => original(text.startsWith(question) ? question : '');
  try {
    return await new Promise<string>((resolve) => lines.question(question, resolve));
  } finally {
    lines.close();
    process.stderr.write('\n');
  }
}

async function firstLineOfStdin(): Promise<string> {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const [line] = input.split(/\r?\n/);
  if (line === undefined || line === '') throw new UsageError('no password on standard input');
  return line;
}

/** The password and its confirmation, as the use-case checks them. */
export async function readNewPassword(): Promise<{
  password: string;
  passwordConfirmation: string;
}> {
  if (!process.stdin.isTTY) {
    const password = await firstLineOfStdin();
    return { password, passwordConfirmation: password };
  }
  const password = await ask('New password: ');
  return { password, passwordConfirmation: await ask('Repeat the new password: ') };
}

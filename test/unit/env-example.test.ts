import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema, parseEnv } from '../../config/env.js';

/** `NAME=value` lines are set; `# NAME=value` lines name a variable that is unset by default. */
const variableLine = /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/;

const lines = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8').split('\n');
const variables = lines.flatMap((line) => {
  const match = variableLine.exec(line);
  return match ? [{ name: match[2] as string, value: match[3] as string, set: !match[1] }] : [];
});

describe('.env.example', () => {
  it('names exactly the variables config/env.ts parses, once each', () => {
    const names = variables.map(({ name }) => name);
    expect(names.toSorted()).toEqual(Object.keys(envSchema.shape).toSorted());
    expect(new Set(names).size).toBe(names.length);
  });

  it('gives each variable it sets its default, so copying the file changes nothing', () => {
    const set = Object.fromEntries(
      variables.filter((variable) => variable.set).map(({ name, value }) => [name, value]),
    );
    expect(parseEnv(set)).toEqual(parseEnv({}));
  });

  it('comments every variable on the line above it', () => {
    const uncommented = variables
      .map(({ name }) => name)
      .filter((name) => {
        const index = lines.findIndex((line) => variableLine.exec(line)?.[2] === name);
        const above = lines[index - 1] ?? '';
        return !above.startsWith('# ') || variableLine.test(above);
      });
    expect(uncommented).toEqual([]);
  });
});

// The launcher's first step: one clear line, rather than an obscure crash further in, when the
// running Node is older than package.json's `engines` floor.
import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
/** ">=22.13" */
export const nodeRange = packageJson.engines.node;

/** The one-line refusal for a Node older than `range` (">=X.Y.Z"), or undefined when it fits. */
export function unsupportedNodeMessage(version, execPath, range = nodeRange) {
  const floor = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(range)?.[1];
  if (!floor) return undefined;
  const parts = (text) => text.split('.').map(Number);
  const [have, need] = [parts(version), parts(floor)];
  for (let index = 0; index < 3; index++) {
    const difference = (have[index] ?? 0) - (need[index] ?? 0);
    if (difference > 0) return undefined;
    if (difference < 0) {
      return `Herald needs Node ${range} but this is Node ${version} (${execPath}): install Node ${need[0]} LTS or newer (https://nodejs.org), or put the one scripts/ensure-node.sh installs first on PATH.`;
    }
  }
  return undefined;
}

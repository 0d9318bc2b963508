#!/usr/bin/env node
// Herald runs its TypeScript sources directly through tsx's loader: no build step to forget.
// The Node check comes first, before anything is loaded that may need a newer Node.
import { unsupportedNodeMessage } from './node-version.js';

const unsupported = unsupportedNodeMessage(process.versions.node, process.execPath);
if (unsupported) {
  const { runOnSupportedNode } = await import('./supported-node.js');
  await runOnSupportedNode(unsupported);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}

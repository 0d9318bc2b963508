#!/usr/bin/env node
// Herald runs its TypeScript sources directly through tsx's loader: no build step to forget.
// The Node check comes first, before anything is loaded that may need a newer Node.
import { unsupportedNodeMessage } from './node-version.js';

// Run by the launcher of an older Node (bin/supported-node.js): die with it. It forwards every
// signal it can; only a SIGKILL leaves the channel closed without one.
if (process.env.HERALD_SUPPORTED_NODE_RERUN && process.channel) {
  process.channel.unref();
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}

const unsupported = unsupportedNodeMessage(process.versions.node, process.execPath);
if (unsupported) {
  const { runOnSupportedNode } = await import('./supported-node.js');
  await runOnSupportedNode(unsupported);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}

#!/usr/bin/env node
// Herald runs its TypeScript sources directly through tsx's loader: no build step to forget.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');

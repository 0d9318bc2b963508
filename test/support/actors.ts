import type { Actor } from '../../commands/actor.js';

/** Who a test's own set-up (a workspace, its members, keys) is audited by. */
export const TEST_OPERATOR: Actor = { kind: 'operator', user: 'test-setup', host: 'vitest' };

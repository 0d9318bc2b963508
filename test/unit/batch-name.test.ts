import { describe, expect, it } from 'vitest';
import { batchName } from '../../domain/batch-name.js';

describe('batchName', () => {
  it('is the given name, else the reference, else a default by source', () => {
    const unnamed = { id: 7, name: null, reference: null };
    expect([
      batchName({ ...unnamed, name: 'Spring sale', reference: 'spring', source: 'api' }),
      batchName({ ...unnamed, reference: 'invoice-reminders', source: 'api' }),
      batchName({ ...unnamed, source: 'api' }),
      batchName({ ...unnamed, source: 'quick_send' }),
      batchName({ ...unnamed, source: null }),
    ]).toEqual(['Spring sale', 'invoice-reminders', 'API send #7', 'Quick Send #7', 'Batch #7']);
  });
});

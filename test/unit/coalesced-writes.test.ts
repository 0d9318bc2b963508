import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { coalescedWrites } from '../../db/coalesced-writes.js';

interface Item {
  key: string;
  value: number;
}

/** A write that records each call's items and answers when the test releases it. */
function gatedWrite(fail?: (items: Item[]) => unknown) {
  const calls: string[][] = [];
  const releases: (() => void)[] = [];
  const write = async (items: Item[]) => {
    calls.push(items.map((item) => `${item.key}:${item.value}`));
    await new Promise<void>((resolve) => releases.push(resolve));
    const error = fail?.(items);
    if (error) throw error;
    return items.map((item) => item.value * 10);
  };
  const releaseNext = async () => {
    await until(() => releases.length > 0);
    releases.shift()?.();
  };
  return { calls, write, releaseNext };
}

async function until(test: () => boolean) {
  for (let turn = 0; !test(); turn++) {
    if (turn > 100) throw new Error('never happened');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const item = (key: string, value: number): Item => ({ key, value });

describe('coalescedWrites', () => {
  it('writes a lone call at once, then everything that arrived meanwhile in one write', async () => {
    const gate = gatedWrite();
    const record = coalescedWrites(gate.write, { max: 10 });
    const first = record(item('a', 1));
    const later = [record(item('b', 2)), record(item('c', 3)), record(item('d', 4))];
    expect(gate.calls).toEqual([['a:1']]);
    await gate.releaseNext();
    await gate.releaseNext();
    expect(await Promise.all([first, ...later])).toEqual([10, 20, 30, 40]);
    expect(gate.calls).toEqual([['a:1'], ['b:2', 'c:3', 'd:4']]);
  });

  it('carries at most `max` items a write, in the order they came', async () => {
    const gate = gatedWrite();
    const record = coalescedWrites(gate.write, { max: 2 });
    const all = [
      record(item('a', 1)),
      record(item('b', 2)),
      record(item('b', 3)),
      record(item('c', 4)),
      record(item('d', 5)),
    ];
    for (let write = 0; write < 3; write++) await gate.releaseNext();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
    expect(gate.calls).toEqual([['a:1'], ['b:2', 'b:3'], ['c:4', 'd:5']]);
  });

  it('writes a failed batch again item by item, so only the bad item fails', async () => {
    const bad = new postgres.PostgresError({ code: '22007', message: 'bad timestamp' } as never);
    const gate = gatedWrite((items) => items.some((each) => each.key === 'bad') && bad);
    const record = coalescedWrites(gate.write, { max: 10 });
    const all = Promise.allSettled([
      record(item('a', 1)),
      record(item('b', 2)),
      record(item('bad', 3)),
    ]);
    for (let write = 0; write < 4; write++) await gate.releaseNext();
    expect(await all).toEqual([
      { status: 'fulfilled', value: 10 },
      { status: 'fulfilled', value: 20 },
      { status: 'rejected', reason: bad },
    ]);
    expect(gate.calls).toEqual([['a:1'], ['b:2', 'bad:3'], ['b:2'], ['bad:3']]);
  });

  it('fails the whole batch at once while Postgres is away, without writing each item', async () => {
    const away = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const gate = gatedWrite(() => away);
    const record = coalescedWrites(gate.write, { max: 10 });
    const all = Promise.allSettled([
      record(item('a', 1)),
      record(item('b', 2)),
      record(item('c', 3)),
    ]);
    await gate.releaseNext();
    await gate.releaseNext();
    expect(await all).toEqual(Array(3).fill({ status: 'rejected', reason: away }));
    expect(gate.calls).toEqual([['a:1'], ['b:2', 'c:3']]);
  });
});

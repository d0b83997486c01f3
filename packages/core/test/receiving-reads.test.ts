import { describe, expect, it } from 'vitest';
import { RECEIVING_READS_MS, receivingReads } from '../src/receiving/receiving-reads.js';
import type { ReceivingRouteRecord } from '../src/store/receiving-store.js';
import type { Store } from '../src/store/store.js';

const ROUTE: ReceivingRouteRecord = {
  id: 'rte_1',
  projectId: 'prj_1',
  domain: 'in.acme.test',
  pattern: 'support',
  destination: { kind: 'store' },
  createdAt: new Date(0),
};

/** A store of the two reads, counting them; `failing` makes the next reads throw. */
function counting() {
  const asked: string[] = [];
  const state = { failing: false, routes: [ROUTE] };
  const store = {
    async findReceivingRoutes(domain: string) {
      asked.push(`routes ${domain}`);
      if (state.failing) throw new Error('database is locked');
      return state.routes;
    },
    async getReceivingSettings(projectId: string) {
      asked.push(`settings ${projectId}`);
      return undefined;
    },
  } as unknown as Store;
  return { store, asked, state };
}

describe('receivingReads', () => {
  it('reads a domain’s routes and a project’s settings once per period, each key apart', async () => {
    let now = 0;
    const { store, asked } = counting();
    const reads = receivingReads({ store }, { now: () => now });
    await Promise.all([reads.routes('in.acme.test'), reads.routes('in.acme.test')]);
    await reads.routes('other.test');
    await reads.settings('prj_1');
    await reads.settings('prj_1');
    expect(asked).toEqual(['routes in.acme.test', 'routes other.test', 'settings prj_1']);
    now = RECEIVING_READS_MS + 1;
    expect(await reads.routes('in.acme.test')).toEqual([ROUTE]);
    expect(asked.at(-1)).toBe('routes in.acme.test');
    expect(asked).toHaveLength(4);
  });

  it('forgets everything at once (a change made through this engine is seen by the next message)', async () => {
    const { store, asked, state } = counting();
    const reads = receivingReads({ store }, { now: () => 0 });
    expect(await reads.routes('in.acme.test')).toEqual([ROUTE]);
    state.routes = [];
    expect(await reads.routes('in.acme.test')).toEqual([ROUTE]);
    reads.forget();
    expect(await reads.routes('in.acme.test')).toEqual([]);
    expect(asked).toEqual(['routes in.acme.test', 'routes in.acme.test']);
  });

  it('keeps no failed read: the next message asks again', async () => {
    const { store, asked, state } = counting();
    const reads = receivingReads({ store }, { now: () => 0 });
    state.failing = true;
    await expect(reads.routes('in.acme.test')).rejects.toThrow('locked');
    state.failing = false;
    expect(await reads.routes('in.acme.test')).toEqual([ROUTE]);
    expect(asked).toEqual(['routes in.acme.test', 'routes in.acme.test']);
  });
});

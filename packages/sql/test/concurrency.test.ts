import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Store } from '@mailroom/core';
import { testTime } from '@mailroom/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqlKind } from '../src/index.js';
import { storeOn, testDatabases } from './support/databases.js';
import { seedDeliveries } from './support/seed.js';

const LEASE = 60_000;
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLAIMER = fileURLToPath(new URL('./support/sqlite-claimer.ts', import.meta.url));

/** Claims and completes deliveries at `now` until a claim comes back empty; returns the ids claimed. */
async function drain(store: Store, now: Date): Promise<string[]> {
  const claimed: string[] = [];
  for (;;) {
    const batch = await store.claimDeliveries({ now, limit: 100, leaseMs: LEASE });
    if (batch.length === 0) return claimed;
    const written = await store.completeDeliveries(
      batch.map((d) => {
        claimed.push(d.id);
        return { id: d.id, leaseToken: d.leaseToken, outcome: { status: 'sent', sentAt: now, now } };
      }),
    );
    expect(written.every(Boolean)).toBe(true);
  }
}

/** Runs the claimer script in its own process; resolves to the ids it claimed. */
function claimerProcess(
  url: string,
  now: Date,
): { ready: Promise<void>; go(): void; done: Promise<string[]> } {
  const child = spawn(
    process.execPath,
    ['--conditions=mailroom-source', '--import', 'tsx', CLAIMER, url, String(now.getTime())],
    {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  let out = '';
  let signalReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    signalReady = resolve;
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    out += chunk;
    if (out.startsWith('ready\n')) signalReady();
  });
  const done = new Promise<string[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`claimer exited with ${code}`));
      resolve(JSON.parse(out.slice('ready\n'.length)) as string[]);
    });
  });
  return { ready, go: () => child.stdin.end('go\n'), done };
}

for (const kind of ['sqlite', 'postgres', 'mysql'] as const satisfies readonly SqlKind[]) {
  describe(`sql:${kind} under concurrency`, () => {
    const databases = testDatabases(kind);
    if (!databases) return;
    const opened: Store[] = [];
    const open = async (url: string) => {
      const store = storeOn(url, 2);
      opened.push(store);
      await store.init();
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    it('a claimer that stops renewing loses its deliveries to another; its late writes are refused', async () => {
      const url = await databases.create();
      const [first, second] = [await open(url), await open(url)] as const;
      const { deliveries } = await seedDeliveries(first, 20);

      const held = await first.claimDeliveries({ now: testTime(0), limit: 100, leaseMs: 1_000 });
      expect(held).toHaveLength(20);
      const leases = held.map((d) => ({ id: d.id, leaseToken: d.leaseToken }));
      // Renewed once, to 1.5 s; then the first claimer goes silent.
      expect(new Set(await first.renewLeases(leases, testTime(1_500)))).toEqual(
        new Set(leases.map((l) => l.id)),
      );
      expect(await second.claimDeliveries({ now: testTime(1_499), limit: 100, leaseMs: LEASE })).toEqual([]);

      const taken = await second.claimDeliveries({ now: testTime(1_500), limit: 100, leaseMs: LEASE });
      expect(taken.map((d) => d.id).sort()).toEqual(deliveries.map((d) => d.id).sort());
      for (const d of taken) expect(d.leaseToken).toBe(2);

      const [late] = held;
      if (!late) throw new Error('expected a claim');
      expect(await first.renewLeases(leases, testTime(9_000))).toEqual([]);
      expect(
        await first.completeDeliveries([
          {
            id: late.id,
            leaseToken: late.leaseToken,
            outcome: { status: 'failed', lastError: 'late', now: testTime(2_000) },
          },
        ]),
      ).toEqual([false]);
      const winner = taken.find((d) => d.id === late.id);
      expect(
        await second.completeDeliveries([
          {
            id: late.id,
            leaseToken: winner?.leaseToken ?? -1,
            outcome: { status: 'sent', now: testTime(2_001) },
          },
        ]),
      ).toEqual([true]);
      expect(await first.getDelivery(late.id)).toMatchObject({
        status: 'sent',
        lastError: null,
        attempts: 2,
        leaseToken: 2,
      });
    });

    if (kind === 'sqlite') {
      it('two processes drain one file: every delivery is claimed exactly once', async () => {
        const url = await databases.create();
        const { deliveries } = await seedDeliveries(await open(url), 10_000);
        const workers = [claimerProcess(url, testTime(0)), claimerProcess(url, testTime(0))];
        await Promise.all(workers.map((w) => w.ready));
        for (const w of workers) w.go();
        const claimed = await Promise.all(workers.map((w) => w.done));
        const all = claimed.flat();
        expect(new Set(all).size).toBe(all.length);
        expect(all.sort()).toEqual(deliveries.map((d) => d.id).sort());
        // Both processes took part (the loser of every race still gets work on a 10,000 backlog).
        for (const ids of claimed) expect(ids.length).toBeGreaterThan(0);
        expect((await opened[0]?.countDeliveries(deliveries[0]?.mailingId ?? ''))?.sent).toBe(10_000);
      }, 120_000);
    } else {
      it('eight claimers on separate connections drain 10,000 deliveries, each claimed exactly once', async () => {
        const url = await databases.create();
        const { mailing, deliveries } = await seedDeliveries(await open(url), 10_000);
        const claimers = await Promise.all(Array.from({ length: 8 }, () => open(url)));
        const claimed = await Promise.all(claimers.map((store) => drain(store, testTime(0))));
        const all = claimed.flat();
        expect(new Set(all).size).toBe(all.length);
        expect(all.sort()).toEqual(deliveries.map((d) => d.id).sort());
        expect(claimed.filter((ids) => ids.length > 0).length).toBeGreaterThan(1);
        expect((await claimers[0]?.countDeliveries(mailing.id))?.sent).toBe(10_000);
      }, 120_000);
    }
  });
}

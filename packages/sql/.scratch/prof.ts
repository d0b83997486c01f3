import { sqlStore } from '../src/index.js';
import { makeBatch, makeDelivery, makeMailing, makeProject, makeSecret, testTime } from '../../core/src/testing/store-fixtures.js';
import { rmSync } from 'node:fs';
rmSync('/tmp/mr-bench2', { recursive: true, force: true });
const store = sqlStore({ url: 'sqlite:/tmp/mr-bench2/b.db' }); await store.init();
const p = makeProject(); await store.createProject(p, makeSecret(p.id));
for (const withProfiles of [false, true, false, true]) {
const m = makeMailing(p.id);
const BATCHES = 40, SIZE = 250;
const prepared = Array.from({ length: BATCHES }, (_, b) => {
  const batch = makeBatch(m.id, { seq: b + 1 });
  const addrs = Array.from({ length: SIZE }, (_, i) => `user${b * SIZE + i}@example.com`);
  return { batch, deliveries: addrs.map((a) => makeDelivery(m, batch, a, { variables: { first: 'Ann', n: 1 } })), profiles: withProfiles ? addrs.map((a) => ({ address: a, name: 'Ann', traits: { plan: 'free' } })) : [] };
});
const t0 = performance.now();
for (let b = 0; b < BATCHES; b++) {
  await store.commitBatch({
    target: b === 0 ? { create: m } : { mailingId: m.id, allowStatus: ['queued', 'sending'], setStatus: 'sending' },
    batch: prepared[b]!.batch, deliveries: prepared[b]!.deliveries, profiles: prepared[b]!.profiles,
    profileOptions: { onExistingTrait: 'preserve', onExistingProfile: 'preserve' },
    sourceJobs: [], now: testTime(),
  });
}
const dt = (performance.now() - t0) / 1000;
console.log('profiles', withProfiles, 'recipients/s', Math.round((BATCHES * SIZE) / dt));
}
await store.close();

import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { BENCH_STORES } from '/work/main/bench/support/stores.js';
const which = process.env.STORE ?? 'memory';
const BATCHES = Number(process.env.BENCH_BATCHES ?? 400);
const make = BENCH_STORES.find(([n]) => n === which)![1];
const { store, drop } = await make();
const mailroom = createMailroom({ store, transport: memoryTransport() });
const { project, secret } = await mailroom.admin.createProject({ name: 'bench' });
await mailroom.admin.addSender(project.id, { address: 'news@bench.test' });
const auth = await mailroom.authenticate(secret);
const batches = Array.from({ length: BATCHES }, (_, b) =>
  Array.from({ length: 250 }, (_, i) => ({ address: `u${b * 250 + i}@example.test`, name: `User ${b * 250 + i}`, variables: { code: `C${i}`, tier: i % 3 } })));
const { ref } = await mailroom.broadcast(auth, { subject: 'Hi', sender: 'news@bench.test', message: '<p>Hello {{ code }}</p>', recipients: batches[0] });
const t0 = performance.now();
for (let b = 1; b < BATCHES; b++) await mailroom.broadcast(auth, { broadcastRef: ref, recipients: batches[b] });
const s = (performance.now() - t0) / 1000;
console.log(which, Math.round(((BATCHES - 1) * 250) / s));
await mailroom.close(); await drop();

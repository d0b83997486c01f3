import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { BENCH_STORES } from '/work/main/bench/support/stores.js';
const which = process.env.STORE ?? 'memory';
const BATCHES = Number(process.env.BENCH_BATCHES ?? 400);
const make = BENCH_STORES.find(([n]) => n === which)![1];
const { store, drop } = await make();
let inCommit = 0; let inCommitWall = 0;
if (process.env.WRAP) { const orig = store.commitBatch.bind(store); store.commitBatch = async (w) => { const c0 = process.cpuUsage(); const t0 = performance.now(); try { return await orig(w); } finally { const c = process.cpuUsage(c0); inCommit += c.user + c.system; inCommitWall += performance.now() - t0; } }; }
const mailroom = createMailroom({ store, transport: memoryTransport() });
const { project, secret } = await mailroom.admin.createProject({ name: 'bench' });
await mailroom.admin.addSender(project.id, { address: 'news@bench.test' });
const auth = await mailroom.authenticate(secret);
const batches = Array.from({ length: BATCHES }, (_, b) =>
  Array.from({ length: 250 }, (_, i) => ({ address: `u${b * 250 + i}@example.test`, name: `User ${b * 250 + i}`, variables: { code: `C${i}`, tier: i % 3 } })));
const { ref } = await mailroom.broadcast(auth, { subject: 'Hi', sender: 'news@bench.test', message: '<p>Hello {{ code }}</p>', recipients: batches[0] });
const t0 = performance.now(); const c0 = process.cpuUsage();
for (let b = 1; b < BATCHES; b++) await mailroom.broadcast(auth, { broadcastRef: ref, recipients: batches[b] });
const s = (performance.now() - t0) / 1000;
const c = process.cpuUsage(c0); const cs = (c.user + c.system) / 1e6;
if (process.env.WRAP) console.log('commitBatch cpu µs/row', (inCommit / ((BATCHES - 1) * 250)).toFixed(2), 'wall µs/row', (inCommitWall * 1000 / ((BATCHES - 1) * 250)).toFixed(2), 'total cpu µs/row', (cs * 1e6 / ((BATCHES - 1) * 250)).toFixed(2));
console.log(which, 'wall', Math.round(((BATCHES - 1) * 250) / s), 'cpu', Math.round(((BATCHES - 1) * 250) / cs));
await mailroom.close(); await drop();

import { parseBroadcastRequest } from '../../core/src/request/index.js';
import { createBatchRequestSchema } from '../../core/src/request/schemas.js';
import { normalizeBatchRequest } from '../../core/src/request/normalize.js';
import { checkAddress } from '../../core/src/request/address.js';
const bodies = Array.from({ length: 50 }, (_, b) => ({ broadcastRef: 'bc_x', recipients: Array.from({ length: 250 }, (_, i) => ({ address: `u${b * 250 + i}@example.test`, name: `User ${b * 250 + i}`, variables: { code: `C${i}`, tier: i % 3 } })) }));
const full = createBatchRequestSchema(250);
const time = (label: string, fn: (b: any) => unknown) => {
  for (let i = 0; i < 200; i++) fn(bodies[i % 50]);
  const c0 = process.cpuUsage(); const N = 1000;
  for (let i = 0; i < N; i++) fn(bodies[i % 50]);
  const c = process.cpuUsage(c0); console.log(label, ((c.user + c.system) / 1000 / N).toFixed(3), 'ms cpu per 250');
};
time('fast path parse', (b) => parseBroadcastRequest(b));
time('old path (zod + normalize)', (b) => normalizeBatchRequest(full.parse(b) as any));
time('checkAddress x250', (b) => { for (const r of b.recipients) checkAddress(r.address); });

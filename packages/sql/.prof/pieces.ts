import { buildBatch } from '../../core/src/accept.js';
import { parseBroadcastRequest } from '../../core/src/request/index.js';
import { createCodec } from '../src/codec.js';
const bodies = Array.from({ length: 50 }, (_, b) => ({ broadcastRef: 'bc_x', recipients: Array.from({ length: 250 }, (_, i) => ({ address: `u${b * 250 + i}@example.test`, name: `User ${b * 250 + i}`, variables: { code: `C${i}`, tier: i % 3 } })) }));
const parsed = bodies.map((b) => (parseBroadcastRequest(b) as any).request.recipients);
const now = new Date();
const mailing: any = { id: 'bcm_x', projectId: 'prj_x', sandbox: false, options: { scheduleFor: null }, sender: { address: 'news@bench.test' } };
const codec = createCodec('sqlite');
const time = (label: string, fn: (i: number) => unknown) => {
  for (let i = 0; i < 300; i++) fn(i);
  const c0 = process.cpuUsage(); const N = 2000;
  for (let i = 0; i < N; i++) fn(i);
  const c = process.cpuUsage(c0); console.log(label.padEnd(30), ((c.user + c.system) / N).toFixed(1), 'µs cpu per 250');
};
time('parse', (i) => parseBroadcastRequest(bodies[i % 50]));
time('buildBatch', (i) => buildBatch(mailing, 2, parsed[i % 50], now));
const built = parsed.map((p) => buildBatch(mailing, 2, p, now));
time('deliveryParams', (i) => built[i % 50].deliveries.map(codec.deliveryParams));

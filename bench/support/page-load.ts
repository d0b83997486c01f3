/**
 * `page-load <url> <per-second>`: GETs `url` at that rate from a process of its own (so that its timings
 * are not the server's event loop's), until a line arrives on stdin; then prints one JSON line: the number
 * of pages and their p50, p99 and max in milliseconds. Any answer but 200 fails it. BENCH_PAGE_AUTH, when
 * set, is sent as the `authorization` header (an API route).
 *
 * Open loop: each request leaves at its time whether the ones before it were answered or not, as
 * visitors arrive; a server that stalls for a second is charged for every request of that second, not
 * for the one a closed loop would have sent (coordinated omission).
 */
const [url, rateArg] = process.argv.slice(2);
const rate = Number(rateArg);
const auth = process.env.BENCH_PAGE_AUTH;
if (!url || !(rate > 0)) throw new Error('usage: page-load <url> <per-second>');
let running = true;
process.stdin.once('data', () => {
  running = false;
});
const latencies: number[] = [];
const pending = new Set<Promise<void>>();
let failure: Error | undefined;
const gap = 1000 / rate;
const start = performance.now();
for (let i = 0; running; i++) {
  const wait = start + i * gap - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  if (!running) break;
  const request = (async () => {
    const sent = performance.now();
    const res = await fetch(url, auth ? { headers: { authorization: auth } } : undefined);
    await res.text();
    if (res.status !== 200) failure ??= new Error(`page: ${res.status}`);
    latencies.push(performance.now() - sent);
  })().catch((error: unknown) => {
    failure ??= error instanceof Error ? error : new Error(String(error));
  });
  pending.add(request);
  void request.finally(() => pending.delete(request));
}
await Promise.all(pending);
if (failure) throw failure;
const sorted = [...latencies].sort((a, b) => a - b);
const at = (p: number) =>
  +(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0).toFixed(1);
process.stdout.write(
  `${JSON.stringify({ pages: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) })}\n`,
);
process.exit(0);

/**
 * `page-load <url> <per-second>`: GETs `url` at that rate, one request at a time, from a process of its own
 * (so that its timings are not the server's event loop's), until a line arrives on stdin; then prints one
 * JSON line: the number of pages and their p50, p99 and max in milliseconds. Any answer but 200 fails it.
 */
const [url, rateArg] = process.argv.slice(2);
const rate = Number(rateArg);
if (!url || !(rate > 0)) throw new Error('usage: page-load <url> <per-second>');
let running = true;
process.stdin.once('data', () => {
  running = false;
});
const latencies: number[] = [];
const gap = 1000 / rate;
while (running) {
  const started = performance.now();
  const res = await fetch(url);
  await res.text();
  if (res.status !== 200) throw new Error(`page: ${res.status}`);
  latencies.push(performance.now() - started);
  const wait = gap - (performance.now() - started);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
const sorted = [...latencies].sort((a, b) => a - b);
const at = (p: number) =>
  +(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0).toFixed(1);
process.stdout.write(
  `${JSON.stringify({ pages: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) })}\n`,
);
process.exit(0);

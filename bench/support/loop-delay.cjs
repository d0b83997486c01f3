/**
 * `node --require loop-delay.cjs`: the event-loop delay of the process it is loaded in (a `mailroom serve`
 * under a benchmark), through `perf_hooks.monitorEventLoopDelay` (10 ms resolution). SIGUSR2 starts a new
 * measurement; every 250 ms the figures since then are written to BENCH_LOOP_DELAY_FILE as one JSON object
 * (milliseconds): p50, p99, max, mean, and how many stalls over 20 ms and 50 ms the loop had.
 */
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { writeFileSync } = require('node:fs');

const file = process.env.BENCH_LOOP_DELAY_FILE;
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let over20 = 0;
  let over50 = 0;
  // A second probe, of stalls: a timer every 10 ms that notes how late it ran.
  let last = performance.now();
  const probe = setInterval(() => {
    const now = performance.now();
    const late = now - last - 10;
    if (late > 20) over20++;
    if (late > 50) over50++;
    last = now;
  }, 10);
  probe.unref();
  const ms = (ns) => +(ns / 1e6).toFixed(1);
  const write = () => {
    writeFileSync(
      file,
      JSON.stringify({
        p50Ms: ms(histogram.percentile(50)),
        p99Ms: ms(histogram.percentile(99)),
        maxMs: ms(histogram.max),
        meanMs: ms(histogram.mean),
        stallsOver20Ms: over20,
        stallsOver50Ms: over50,
      }),
    );
  };
  const timer = setInterval(write, 250);
  timer.unref();
  process.on('SIGUSR2', () => {
    histogram.reset();
    over20 = 0;
    over50 = 0;
  });
}

/**
 * Issue 31: `delivery-corpus` with limits per destination configured but not binding, against the same
 * serve without them, in the same run: the `mailroom` stack (serve's defaults) and the `alt` stack (serve
 * with `--destination-limit` for every destination, far above what the machine sends). The report's
 * `altToMailroom` is the ratio of the medians (limits / none). Every delivery then takes a token from the
 * store (SQLite, serve's default) right before its send.
 *
 * Environment: as `delivery-corpus`; defaults here: BENCH_STACKS=mailroom,alt, BENCH_ALT_ARGS
 * `--destination-limit *=1000000/s,1000000000/d`, BENCH_RECIPIENTS 20000, BENCH_TEMPLATES newsletter.
 */
process.env.BENCH_STACKS ??= 'mailroom,alt';
process.env.BENCH_ALT_ARGS ??= '--destination-limit *=1000000/s,1000000000/d';
process.env.BENCH_RECIPIENTS ??= '20000';
process.env.BENCH_TEMPLATES ??= 'newsletter';
await import('./delivery-corpus.js');

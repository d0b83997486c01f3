import pg from 'pg';
const orig = pg.Client.prototype.query;
const stats = new Map<string, { n: number; ms: number }>();
(pg.Client.prototype as any).query = function (this: any, config: any, values: any, cb: any) {
  const text: string = typeof config === 'string' ? config : config?.text ?? '';
  const key = (config?.name ? '[' + config.name + '] ' : '') + text.replace(/\s+/g, ' ').slice(0, 60);
  const t0 = performance.now();
  const r = orig.call(this, config, values, cb);
  if (r && typeof r.then === 'function') r.then(() => { const s = stats.get(key) ?? { n: 0, ms: 0 }; s.n++; s.ms += performance.now() - t0; stats.set(key, s); }, () => {});
  return r;
};
process.on('exit', () => { for (const [k, v] of [...stats].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15)) console.log(v.n, v.ms.toFixed(0), (v.ms / v.n).toFixed(2), k); });
await import('./accept.ts');

const fs = require('fs'); const dir = '/tmp/mr-prof'; const f = fs.readdirSync(dir)[0];
const prof = JSON.parse(fs.readFileSync(dir + '/' + f));
const self = new Map(); const byId = new Map(prof.nodes.map(n => [n.id, n]));
const dts = prof.timeDeltas; const total = dts.reduce((a,b)=>a+b,0);
prof.samples.forEach((id, i) => { const n = byId.get(id); const k = n.callFrame.functionName + ' ' + n.callFrame.url.split('/').slice(-2).join('/') + ':' + n.callFrame.lineNumber; self.set(k, (self.get(k)||0) + dts[i]); });
[...self].sort((a,b)=>b[1]-a[1]).slice(0,25).forEach(([k,v]) => console.log((v/total*100).toFixed(1)+'%', k));

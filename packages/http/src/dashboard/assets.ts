/**
 * The dashboard's one stylesheet and one script, inlined in every page under a per-response nonce: nothing
 * is fetched from anywhere (it works offline and behind any firewall) and nothing is built at run time.
 */

/** The stylesheet: system fonts, a table that becomes cards at phone width. */
export const DASHBOARD_CSS = `
:root{--fg:#1d2125;--muted:#5f6b76;--line:#dde1e5;--bg:#f5f6f7;--card:#fff;--accent:#2456c8;
--ok:#1c7c43;--warn:#a15c00;--bad:#b3261e;--radius:8px;color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.6rem 1rem;
background:#14181c;color:#fff}
header.top a{color:#fff;text-decoration:none}
.brand{font-weight:700;letter-spacing:.02em}
.project{color:#b8c2cc;font-size:.9em}
nav{display:flex;flex-wrap:wrap;gap:.25rem;flex:1}
nav a{padding:.3rem .6rem;border-radius:6px}
nav a[aria-current=page]{background:#2b333b}
header.top form{margin:0}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.45rem;margin:.4rem 0 .8rem;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.6rem 0 .6rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:1rem;
margin-bottom:1rem;overflow-wrap:anywhere}
.muted{color:var(--muted)}
.notice{padding:.7rem 1rem;border-radius:var(--radius);background:#fff4e5;border:1px solid #f0c98a;margin:0 0 1rem}
.notice.error{background:#fdecea;border-color:#f2b8b5}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);
border-radius:var(--radius);overflow:hidden}
th,td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid var(--line);vertical-align:top;
overflow-wrap:anywhere}
th{font-size:.8em;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);background:#fafbfc;
overflow-wrap:normal;word-break:keep-all;hyphens:none}
tr:last-child td{border-bottom:0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.8em;font-weight:600;
background:#e8ebee;color:#333;white-space:nowrap}
.badge.sent,.badge.completed,.badge.done,.badge.verified,.badge.found,.badge.active,.badge.healthy{background:#dcf3e5;color:var(--ok)}
.badge.sending,.badge.running,.badge.queued,.badge.pending{background:#e3ecfd;color:var(--accent)}
.badge.scheduled,.badge.no-answer,.badge.retiring,.badge.circuit_open,.badge.expiring{background:#fff1d6;color:var(--warn)}
.badge.failed,.badge.cancelled,.badge.bounced,.badge.complained,.badge.missing,.badge.wrong{background:#fbe3e1;color:var(--bad)}
.badge.suppressed,.badge.skipped,.badge.retired,.badge.disabled,.badge.revoked,.badge.expired{background:#eceff1;color:var(--muted)}
.progress{display:flex;align-items:center;gap:.5rem;min-width:9rem}
.progress progress{flex:1;height:.8rem;accent-color:var(--accent)}
.progress span{font-variant-numeric:tabular-nums;min-width:3.2rem;text-align:right}
.counts{display:flex;flex-wrap:wrap;gap:.2rem .7rem;font-size:.9em;font-variant-numeric:tabular-nums}
.counts span b{font-weight:600}
ul.plain{list-style:none;margin:0;padding:0}
.activity figure{margin:.6rem 0 0}.activity figcaption{font-size:.8em;text-transform:uppercase;
letter-spacing:.04em;color:var(--muted)}.activity figure>svg{display:block;height:140px}
.legend svg{display:inline-block;vertical-align:middle}
.legend{display:flex;flex-wrap:wrap;gap:.1rem .9rem;font-size:.85em;font-variant-numeric:tabular-nums}
.ref{display:inline-flex;align-items:center;gap:.35rem;flex-wrap:wrap}
button,.button{font:inherit;padding:.35rem .8rem;border-radius:6px;border:1px solid var(--line);
background:#fff;color:var(--fg);cursor:pointer}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
button.danger{color:var(--bad);border-color:#f2b8b5}
button.small{padding:.1rem .45rem;font-size:.8em}
header.top button{background:transparent;color:#fff;border-color:#3a434c}
form.search{display:flex;flex-wrap:wrap;gap:.5rem;margin:0 0 .8rem}
input,select,textarea{font:inherit;padding:.4rem .5rem;border:1px solid #c5ccd3;border-radius:6px;background:#fff;
max-width:100%}
form.search input[type=search]{flex:1;min-width:12rem}
textarea{width:100%;min-height:6rem;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
label{display:block;margin:.5rem 0 .2rem;color:var(--muted);font-size:.9em}
.pager{display:flex;gap:1rem;margin:.8rem 0}
iframe.preview{width:100%;height:32rem;border:1px solid var(--line);border-radius:var(--radius);background:#fff}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fafbfc;border:1px solid var(--line);
border-radius:var(--radius);padding:.7rem;margin:0}
.signin{max-width:26rem;margin:12vh auto}
.signin input{width:100%}
.signin button{margin-top:1rem;width:100%}
.offscreen{position:fixed;left:-9999px;top:0}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
@media (max-width:720px){
header.top nav{order:3;flex-basis:100%}
header.top form{margin-left:auto}
.grid2{grid-template-columns:1fr}
main{padding:.6rem}
table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}
table.cards thead{display:none}
table.cards{border:0;background:transparent}
table.cards tr{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);margin-bottom:.6rem;
padding:.3rem 0}
table.cards td{border:0;padding:.25rem .7rem;display:flex;gap:.6rem}
table.cards td::before{content:attr(data-label);flex:0 0 6.5rem;color:var(--muted);font-size:.8em;
text-transform:uppercase;letter-spacing:.03em;padding-top:.15rem}
table.cards td>*{min-width:0}
dl.facts{grid-template-columns:1fr}
dl.facts dd{margin-bottom:.4rem}
iframe.preview{height:24rem}
}
`;

/**
 * The script: copy buttons, and live progress. Elements with `data-progress-url` whose `data-status` is not
 * final poll that URL every second and update their bar, and the counts and status badge of the enclosing
 * `[data-mailing]`, until the mailing is completed, cancelled or failed.
 */
export const DASHBOARD_JS = `
(function () {
  'use strict';
  var FINAL = ['completed', 'cancelled', 'failed'];
  function fallbackCopy(text, done) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.appendChild(area);
    area.select();
    try { document.execCommand('copy'); done(); } catch (e) { /* nothing more to try */ }
    area.remove();
  }
  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('button[data-copy]');
    if (!button) return;
    var text = button.getAttribute('data-copy');
    var label = button.textContent;
    var done = function () {
      button.textContent = 'Copied';
      setTimeout(function () { button.textContent = label; }, 1200);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text, done); });
    } else {
      fallbackCopy(text, done);
    }
  });
  var live = Array.prototype.filter.call(document.querySelectorAll('[data-progress-url]'), function (el) {
    return FINAL.indexOf(el.getAttribute('data-status')) < 0;
  });
  function update(el, p) {
    var bar = el.querySelector('progress');
    if (bar) bar.value = p.percent;
    var pct = el.querySelector('[data-percent]');
    if (pct) pct.textContent = p.percent + ' %';
    var scope = el.closest('[data-mailing]') || document;
    Object.keys(p.counts).forEach(function (key) {
      scope.querySelectorAll('[data-count="' + key + '"]').forEach(function (n) { n.textContent = p.counts[key]; });
    });
    scope.querySelectorAll('[data-count-total]').forEach(function (n) { n.textContent = p.total; });
    scope.querySelectorAll('[data-status-badge]').forEach(function (n) {
      n.textContent = p.status;
      n.className = 'badge ' + p.status;
    });
    el.setAttribute('data-status', p.status);
  }
  function tick() {
    var pending = live.slice();
    var next = function () {
      var el = pending.shift();
      if (!el) {
        if (live.length > 0) setTimeout(tick, 1000);
        return;
      }
      fetch(el.getAttribute('data-progress-url'), {
        headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store'
      }).then(function (res) {
        // Signed out or gone: stop. Anything else (a restart, a blip) is tried again next second.
        if (res.status === 401 || res.status === 404) live.splice(live.indexOf(el), 1);
        return res.ok ? res.json() : null;
      }).then(function (p) {
        if (!p) return;
        update(el, p);
        if (FINAL.indexOf(p.status) >= 0) live.splice(live.indexOf(el), 1);
      }, function () { /* tried again next second */ }).then(next);
    };
    next();
  }
  if (live.length > 0) setTimeout(tick, 1000);
})();
`;

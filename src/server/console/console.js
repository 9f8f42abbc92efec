/* Cairn console: the command line, the key browser, the charts, the slow
 * log and pub/sub, all over the gateway's own HTTP API.
 *
 * Commands go as POST / with the body "COMMAND/arg/....raw" (each part
 * percent-encoded; a POST body is not a URL, so no browser rewrites "." or
 * ".." parts) and come back as RESP, parsed here (types kept: status,
 * error, integer, string, nil, array).  Pub/sub is a streamed GET with
 * Accept: text/event-stream (Server-Sent Events, read through fetch so the
 * credentials header goes with it).  Credentials (when the server's ACL
 * needs them) are HTTP Basic, kept in sessionStorage for this tab. */
'use strict';

const $ = (id) => document.getElementById(id);
let authHeader = sessionStorage.getItem('cairn-auth');

function headers(extra) {
  const h = Object.assign({'X-Requested-With': 'cairn-console'}, extra || {});
  if (authHeader) h['Authorization'] = authHeader;
  return h;
}

/* --- RESP --- */

function parseResp(u8) {
  const td = new TextDecoder();
  let pos = 0;
  function line() {
    let e = pos;
    while (e + 1 < u8.length && !(u8[e] === 13 && u8[e + 1] === 10)) e++;
    const s = td.decode(u8.subarray(pos, e));
    pos = e + 2;
    return s;
  }
  function item() {
    if (pos >= u8.length) return {t: 'error', v: 'incomplete reply'};
    const t = String.fromCharCode(u8[pos++]);
    const l = line();
    switch (t) {
      case '+': return {t: 'status', v: l};
      case '-': return {t: 'error', v: l};
      case ':': return {t: 'int', v: l};
      case '$': {
        const n = parseInt(l, 10);
        if (n < 0) return {t: 'nil'};
        const v = td.decode(u8.subarray(pos, pos + n));
        pos += n + 2;
        return {t: 'bulk', v};
      }
      case '*': {
        const n = parseInt(l, 10);
        if (n < 0) return {t: 'nil'};
        const a = [];
        for (let i = 0; i < n; i++) a.push(item());
        return {t: 'array', v: a};
      }
      default: return {t: 'error', v: 'unexpected reply: ' + t + l};
    }
  }
  return item();
}

class HttpError extends Error {
  constructor(status) { super(status === 401 ? 'credentials needed (HTTP 401)' : 'HTTP ' + status); this.status = status; }
}

/* Runs one command (an array of strings); resolves to its parsed reply.
 * 401 opens the login dialog (and rejects); 403 is an ACL refusal. */
async function cmd(args) {
  const body = args.map(encodeURIComponent).join('/') + '.raw';
  const sent = authHeader;
  const res = await fetch('/', {method: 'POST', headers: headers(), body});
  /* A request sent before a login finished must not reopen the form. */
  if (res.status === 401) { if (sent === authHeader) askLogin(); throw new HttpError(401); }
  if (res.status === 403) return {t: 'error', v: 'NOPERM this user has no permissions to run this command (HTTP 403)'};
  if (res.status !== 200) throw new HttpError(res.status);
  return parseResp(new Uint8Array(await res.arrayBuffer()));
}

/* The reply as JavaScript values: strings, numbers, null, arrays; an
 * error throws. */
async function call(...args) {
  const r = await cmd(args);
  return plain(r);
}
function plain(r) {
  switch (r.t) {
    case 'error': throw new Error(r.v);
    case 'int': return Number(r.v);
    case 'nil': return null;
    case 'array': return r.v.map(plain);
    default: return r.v;
  }
}

/* redis-cli's way of printing a reply. */
function format(r, indent) {
  indent = indent || '';
  switch (r.t) {
    case 'status': return r.v;
    case 'error': return '(error) ' + r.v;
    case 'int': return '(integer) ' + r.v;
    case 'nil': return '(nil)';
    case 'bulk': return JSON.stringify(r.v);
    case 'array': {
      if (!r.v.length) return '(empty array)';
      const w = String(r.v.length).length;
      return r.v.map((x, i) => {
        const p = String(i + 1).padStart(w) + ') ';
        return (i ? indent : '') + p + format(x, indent + ' '.repeat(p.length));
      }).join('\n');
    }
  }
  return '';
}

/* A command line into arguments: spaces split, "..." with \n \t \" \\
 * \xHH escapes, '...' literal. */
function splitArgs(s) {
  const out = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && /\s/.test(s[i])) i++;
    if (i >= s.length) break;
    let cur = '';
    while (i < s.length && !/\s/.test(s[i])) {
      const q = s[i];
      if (q === '"' || q === "'") {
        i++;
        while (i < s.length && s[i] !== q) {
          if (q === '"' && s[i] === '\\' && i + 1 < s.length) {
            const c = s[++i];
            if (c === 'x' && /^[0-9a-fA-F]{2}$/.test(s.substr(i + 1, 2))) {
              cur += String.fromCharCode(parseInt(s.substr(i + 1, 2), 16)); i += 3; continue;
            }
            cur += {n: '\n', r: '\r', t: '\t', b: '\b', a: '\x07'}[c] || c;
          } else cur += s[i];
          i++;
        }
        if (i >= s.length) throw new Error('unbalanced quotes');
        i++;
      } else cur += s[i++];
    }
    out.push(cur);
  }
  return out;
}

/* --- login --- */

function askLogin() {
  const d = $('login');
  if (!d.open) d.showModal();
}

$('login-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const user = $('login-user').value, pass = $('login-pass').value;
  authHeader = 'Basic ' + btoa(unescape(encodeURIComponent(user + ':' + pass)));
  try {
    const r = await cmd(['PING']);
    if (r.t === 'error' && !r.v.startsWith('NOPERM')) throw new Error(r.v);
    sessionStorage.setItem('cairn-auth', authHeader);
    $('login').close();
    start();
  } catch (err) {
    $('login-err').textContent = err.status === 401 ? 'wrong user or password' : String(err.message);
  }
});

/* --- tabs --- */

let currentTab = 'cli';
document.querySelectorAll('nav button').forEach((b) => b.addEventListener('click', () => showTab(b.dataset.tab)));
function showTab(name) {
  currentTab = name;
  document.querySelectorAll('nav button').forEach((b) => b.classList.toggle('active', b.dataset.tab === name));
  document.querySelectorAll('.tab').forEach((t) => t.classList.toggle('active', t.id === 'tab-' + name));
  if (name === 'slowlog') loadSlowlog();
  if (name === 'keys' && !$('key-list').children.length) scanKeys();
  if (name === 'stats') Object.values(charts).forEach((c) => c.draw());
  if (name === 'cli') $('cli-in').focus();
}

/* --- command line --- */

const history = JSON.parse(localStorage.getItem('cairn-history') || '[]');
let histPos = history.length;

function cliPrint(text, cls) {
  const div = document.createElement('div');
  if (cls) div.className = cls;
  div.textContent = text;
  $('cli-out').appendChild(div);
  $('cli-out').scrollTop = $('cli-out').scrollHeight;
}

$('cli-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const line = $('cli-in').value;
  if (!line.trim()) return;
  $('cli-in').value = '';
  if (history[history.length - 1] !== line) history.push(line);
  while (history.length > 200) history.shift();
  localStorage.setItem('cairn-history', JSON.stringify(history));
  histPos = history.length;
  cliPrint('> ' + line, 'cmd');
  if (line.trim().toLowerCase() === 'clear') { $('cli-out').textContent = ''; return; }
  let args;
  try { args = splitArgs(line); } catch (err) { cliPrint('(error) ' + err.message, 'err'); return; }
  try {
    const r = await cmd(args);
    cliPrint(format(r), r.t === 'error' ? 'err' : r.t === 'bulk' ? 'str' : '');
  } catch (err) {
    cliPrint('(error) ' + err.message, 'err');
  }
});

$('cli-in').addEventListener('keydown', (e) => {
  if (e.key === 'ArrowUp' && histPos > 0) $('cli-in').value = history[--histPos];
  else if (e.key === 'ArrowDown' && histPos < history.length) $('cli-in').value = history[++histPos] || '';
  else return;
  e.preventDefault();
});

/* --- key browser --- */

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

async function scanKeys() {
  const pattern = $('scan-pattern').value || '*';
  const list = $('key-list');
  list.textContent = '';
  let cursor = '0', n = 0, rounds = 0;
  try {
    do {
      const [next, keys] = await call('SCAN', cursor, 'MATCH', pattern, 'COUNT', '200');
      cursor = next;
      for (const k of keys) {
        const li = el('li');
        li.dataset.key = k;
        li.appendChild(el('span', '…', 'badge'));
        li.appendChild(document.createTextNode(k));
        li.addEventListener('click', () => showKey(k, li));
        list.appendChild(li);
        n++;
      }
    } while (cursor !== '0' && n < 1000 && ++rounds < 100);
    $('scan-count').textContent = n + ' keys' + (cursor !== '0' ? ' (first ' + n + ')' : '');
    for (const li of list.children) { /* the type badges, one request each */
      const t = await call('TYPE', li.dataset.key);
      li.firstChild.textContent = t;
      li.firstChild.className = 'badge t-' + t;
    }
  } catch (err) {
    $('scan-count').textContent = String(err.message);
  }
}
$('scan-form').addEventListener('submit', (e) => { e.preventDefault(); scanKeys(); });

function table(head, rows) {
  const t = el('table');
  const tr = el('tr');
  head.forEach((h) => tr.appendChild(el('th', h)));
  t.appendChild(el('thead')).appendChild(tr);
  const tb = el('tbody');
  rows.forEach((r) => {
    const row = el('tr');
    r.forEach((c) => row.appendChild(el('td', c === null ? '(nil)' : String(c))));
    tb.appendChild(row);
  });
  t.appendChild(tb);
  return t;
}

function pairs(a) {
  const out = [];
  for (let i = 0; i + 1 < a.length; i += 2) out.push([a[i], a[i + 1]]);
  return out;
}

function fmtBytes(n) {
  if (n === null || n === undefined || isNaN(n)) return '?';
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + ' ' + u[i];
}

async function showKey(key, li) {
  document.querySelectorAll('#key-list li.sel').forEach((x) => x.classList.remove('sel'));
  if (li) li.classList.add('sel');
  const view = $('key-view');
  view.textContent = '';
  try {
    const type = await call('TYPE', key);
    const ttl = await call('TTL', key);
    let mem = null;
    try { mem = await call('MEMORY', 'USAGE', key); } catch (e) { /* not allowed: left out */ }
    view.appendChild(el('h2', key));
    const meta = el('div', undefined, 'meta');
    meta.innerHTML = '<span>type <b></b></span><span>TTL <b></b></span><span>memory <b></b></span><span>size <b></b></span>';
    const b = meta.querySelectorAll('b');
    b[0].textContent = type;
    b[1].textContent = ttl === -1 ? 'none' : ttl === -2 ? 'gone' : ttl + ' s';
    b[2].textContent = fmtBytes(mem);
    view.appendChild(meta);
    let size = '', body;
    switch (type) {
      case 'string': {
        const v = await call('GET', key);
        size = (await call('STRLEN', key)) + ' bytes';
        body = el('pre', v);
        break;
      }
      case 'list': {
        size = (await call('LLEN', key)) + ' items';
        const v = await call('LRANGE', key, '0', '199');
        body = table(['index', 'value'], v.map((x, i) => [i, x]));
        break;
      }
      case 'hash': {
        size = (await call('HLEN', key)) + ' fields';
        const [, v] = await call('HSCAN', key, '0', 'COUNT', '200');
        body = table(['field', 'value'], pairs(v));
        break;
      }
      case 'set': {
        size = (await call('SCARD', key)) + ' members';
        const [, v] = await call('SSCAN', key, '0', 'COUNT', '200');
        body = table(['member'], v.map((x) => [x]));
        break;
      }
      case 'zset': {
        size = (await call('ZCARD', key)) + ' members';
        const v = await call('ZRANGE', key, '0', '199', 'WITHSCORES');
        body = table(['member', 'score'], pairs(v));
        break;
      }
      case 'stream': {
        size = (await call('XLEN', key)) + ' entries';
        const v = await call('XREVRANGE', key, '+', '-', 'COUNT', '100');
        body = table(['id', 'fields'], v.map(([id, f]) => [id, pairs(f).map((p) => p[0] + '=' + p[1]).join('  ')]));
        break;
      }
      case 'none':
        body = el('p', 'The key no longer exists.', 'muted');
        break;
      default:
        body = el('p', 'No viewer for type ' + type + '.', 'muted');
    }
    b[3].textContent = size || '-';
    body.id = 'key-value';
    body.dataset.type = type;
    view.appendChild(body);
  } catch (err) {
    view.appendChild(el('p', String(err.message), 'err'));
  }
}

/* --- charts --- */

class Chart {
  /* A line chart of the last `keep` samples of one or more series. */
  constructor(canvas, unit) {
    this.canvas = canvas;
    this.unit = unit;
    this.series = new Map(); /* name -> values */
    this.keep = 120;
    this.points = 0;
  }
  push(name, v) {
    if (!this.series.has(name)) this.series.set(name, []);
    const s = this.series.get(name);
    s.push(v);
    if (s.length > this.keep) s.shift();
  }
  tick() { this.points++; this.canvas.dataset.points = this.points; this.draw(); }
  draw() {
    const c = this.canvas, g = c.getContext('2d');
    const w = c.width, h = c.height, pad = 30;
    g.clearRect(0, 0, w, h);
    let max = 0;
    for (const s of this.series.values()) for (const v of s) if (v > max) max = v;
    max = max > 0 ? max * 1.1 : 1;
    g.strokeStyle = '#2d343d';
    g.fillStyle = '#8792a0';
    g.font = '10px sans-serif';
    g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = 5 + (h - 20) * i / 4;
      g.beginPath(); g.moveTo(pad, y); g.lineTo(w, y); g.stroke();
      g.fillText(short(max * (4 - i) / 4, this.unit), 0, y + 3);
    }
    const colors = ['#5fb3d9', '#7fc97f', '#e5c07b', '#f07b72', '#c678dd', '#56b6c2'];
    let k = 0, lx = pad + 4;
    for (const [name, s] of this.series) {
      g.strokeStyle = colors[k % colors.length];
      g.lineWidth = 1.5;
      g.beginPath();
      s.forEach((v, i) => {
        const x = pad + (w - pad) * (i + this.keep - s.length) / (this.keep - 1);
        const y = 5 + (h - 20) * (1 - v / max);
        if (i) g.lineTo(x, y); else g.moveTo(x, y);
      });
      g.stroke();
      if (this.series.size > 1) {
        g.fillStyle = colors[k % colors.length];
        g.fillText(name, lx, h - 3);
        lx += g.measureText(name).width + 12;
      }
      k++;
    }
  }
}

function short(v, unit) {
  if (unit === 'bytes') return fmtBytes(v).replace(' ', '');
  if (v >= 1e6) return (v / 1e6).toFixed(1) + 'M';
  if (v >= 1e3) return (v / 1e3).toFixed(1) + 'k';
  return v >= 10 ? v.toFixed(0) : v.toFixed(1);
}

const charts = {
  ops: new Chart($('c-ops')),
  mem: new Chart($('c-mem'), 'bytes'),
  clients: new Chart($('c-clients')),
  lat: new Chart($('c-lat')),
};
let lastOps = null;

function infoFields(text) {
  const f = {};
  for (const l of text.split('\r\n')) {
    const i = l.indexOf(':');
    if (i > 0 && l[0] !== '#') f[l.slice(0, i)] = l.slice(i + 1);
  }
  return f;
}

async function poll() {
  let f;
  try { f = infoFields(await call('INFO', 'everything')); } catch (e) { return; }
  $('server-info').textContent = 'Cairn ' + (f.cairn_version || f.redis_version || '') + ' · port ' + f.tcp_port +
    ' · up ' + f.uptime_in_seconds + ' s · ' + f.role;
  const now = performance.now(), total = Number(f.total_commands_processed);
  if (lastOps) {
    const ops = Math.max(0, (total - lastOps.total) * 1000 / (now - lastOps.t));
    charts.ops.push('ops/s', ops);
    $('v-ops').textContent = ops.toFixed(0);
    charts.ops.tick();
  }
  lastOps = {t: now, total};
  charts.mem.push('used', Number(f.used_memory));
  $('v-mem').textContent = fmtBytes(Number(f.used_memory));
  charts.mem.tick();
  charts.clients.push('clients', Number(f.connected_clients));
  $('v-clients').textContent = f.connected_clients;
  charts.clients.tick();
  /* Per-command latency: the commands with the most calls. */
  const calls = {};
  for (const k in f) {
    const m = /^cmdstat_(.+)$/.exec(k);
    if (m) calls[m[1]] = Number((/calls=(\d+)/.exec(f[k]) || [0, 0])[1]);
  }
  const rows = [];
  for (const k in f) {
    const m = /^latency_percentiles_usec_(.+)$/.exec(k);
    if (!m) continue;
    const p = {};
    for (const part of f[k].split(',')) { const [a, b] = part.split('='); p[a] = Number(b); }
    rows.push({cmd: m[1], calls: calls[m[1]] || 0, p});
  }
  rows.sort((a, b) => b.calls - a.calls);
  const top = rows.slice(0, 5);
  for (const r of top) charts.lat.push(r.cmd, r.p.p99 || 0);
  for (const name of [...charts.lat.series.keys()]) if (!top.find((r) => r.cmd === name)) charts.lat.series.delete(name);
  $('v-lat').textContent = top.length ? top[0].cmd + ' ' + (top[0].p.p99 || 0) : '';
  charts.lat.tick();
  if (currentTab === 'stats') await latencyTable(rows.slice(0, 15));
}

async function latencyTable(rows) {
  let hist = {};
  try {
    const h = await call('LATENCY', 'HISTOGRAM', ...rows.map((r) => r.cmd));
    for (const [name, v] of pairs(h)) {
      const m = {};
      for (const [k, x] of pairs(v)) m[k] = x;
      const buckets = pairs(m['histogram_usec'] || []);
      hist[name] = buckets.map(([us, n]) => us + ':' + n).join(' ');
    }
  } catch (e) { hist = {}; }
  const tb = $('lat-table').tBodies[0];
  tb.textContent = '';
  for (const r of rows) {
    const tr = el('tr');
    [r.cmd, r.calls, r.p.p50, r.p.p99, r.p['p99.9'], hist[r.cmd] || ''].forEach((c) => tr.appendChild(el('td', c === undefined ? '' : String(c))));
    tb.appendChild(tr);
  }
}

/* --- slow log --- */

async function loadSlowlog() {
  try {
    const [len, entries] = [await call('SLOWLOG', 'LEN'), await call('SLOWLOG', 'GET', '50')];
    $('slow-len').textContent = len + ' entries';
    const tb = $('slow-table').tBodies[0];
    tb.textContent = '';
    for (const [id, ts, us, args, addr, name] of entries) {
      const tr = el('tr');
      [id, new Date(ts * 1000).toLocaleTimeString(), us, args.join(' '), (addr || '') + (name ? ' ' + name : '')]
        .forEach((c) => tr.appendChild(el('td', String(c))));
      tb.appendChild(tr);
    }
  } catch (err) {
    $('slow-len').textContent = String(err.message);
  }
}
$('slow-refresh').addEventListener('click', loadSlowlog);
$('slow-reset').addEventListener('click', async () => { await call('SLOWLOG', 'RESET'); loadSlowlog(); });

/* --- pub/sub --- */

let watch = null; /* {abort: AbortController} */

async function subscribe(target) {
  if (watch) watch.abort.abort();
  const isPattern = /[*?[]/.test(target);
  const verb = isPattern ? 'PSUBSCRIBE' : 'SUBSCRIBE';
  const abort = new AbortController();
  watch = {abort};
  $('sub-state').textContent = 'connecting…';
  let res;
  const sent = authHeader;
  try {
    res = await fetch('/' + verb + '/' + encodeURIComponent(target),
                      {headers: headers({'Accept': 'text/event-stream'}), signal: abort.signal});
  } catch (err) { $('sub-state').textContent = String(err.message); return; }
  if (res.status === 401) { if (sent === authHeader) askLogin(); $('sub-state').textContent = 'credentials needed'; return; }
  if (res.status !== 200) { $('sub-state').textContent = 'HTTP ' + res.status; return; }
  const reader = res.body.getReader(), td = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buf += td.decode(value, {stream: true});
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = ev.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        if (data) onEvent(target, JSON.parse(data));
      }
    }
    $('sub-state').textContent = 'stream closed';
  } catch (err) {
    if (err.name !== 'AbortError') $('sub-state').textContent = String(err.message);
  }
}

function onEvent(target, obj) {
  const m = Object.values(obj)[0];
  if (!Array.isArray(m)) return;
  if (m[0] === 'subscribe' || m[0] === 'psubscribe') { $('sub-state').textContent = 'watching ' + target; return; }
  const [chan, msg] = m[0] === 'pmessage' ? [m[2], m[3]] : [m[1], m[2]];
  const tb = $('sub-table').tBodies[0];
  const tr = el('tr');
  [new Date().toLocaleTimeString(), target, chan, msg].forEach((c) => tr.appendChild(el('td', String(c))));
  tb.insertBefore(tr, tb.firstChild);
  while (tb.children.length > 500) tb.removeChild(tb.lastChild);
}

$('sub-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const t = $('sub-channel').value.trim();
  if (t) subscribe(t);
});
$('pub-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  try {
    const n = await call('PUBLISH', $('pub-channel').value, $('pub-message').value);
    $('sub-state').textContent = 'published to ' + n + ' subscriber(s)';
  } catch (err) { $('sub-state').textContent = String(err.message); }
});

/* --- start --- */

let started = false;
async function start() {
  try {
    const r = await cmd(['ACL', 'WHOAMI']);
    $('user').textContent = r.t === 'bulk' ? 'user: ' + r.v : '';
  } catch (err) {
    if (err.status === 401) return; /* the login dialog is open */
  }
  if (started) return;
  started = true;
  poll();
  setInterval(poll, 1000);
  $('cli-in').focus();
}
start();

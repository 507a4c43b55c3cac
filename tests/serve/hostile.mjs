// Hostile clients for `pith serve`, with node's net module only (loopback).
// usage: node hostile.mjs MODE PORT KEY [N]
//   flood N      N connections at once, each asking GET /health; prints the
//                count of each first response line (or "closed"/"error")
//   busy N       N idle connections fill the table, then one more asks for
//                /health: prints its status line
//   truncated    a POST whose body never completes: prints what comes back
//                before the server closes the connection
//   halfhead     a request head that never ends: the same
//   leave        asks for a long streamed reply and disconnects after its
//                first bytes: prints "left" (the server must notice)
// Every socket is bounded by a 20 s timer; the script always ends.
import net from 'node:net';

const [mode, portText, key, nText] = process.argv.slice(2);
const port = Number(portText);
const auth = `Authorization: Bearer ${key}\r\n`;
const health = `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`;

function exchange(payload, { end = false } = {}) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    let done = false;
    const t0 = Date.now();
    const finish = (how) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ how, got, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => finish('timeout'), 20000);
    s.on('connect', () => { if (payload) s.write(payload); if (end) s.end(); });
    s.on('data', (d) => { got += d.toString('latin1'); });
    s.on('end', () => finish('closed'));
    s.on('error', (e) => finish('error ' + e.code));
  });
}

const status = (r) => (r.got.startsWith('HTTP/1.1 ') ? r.got.slice(9, 12) : r.how);

if (mode === 'flood') {
  const n = Number(nText);
  const results = await Promise.all(Array.from({ length: n }, () => exchange(health)));
  const counts = {};
  for (const r of results) counts[status(r)] = (counts[status(r)] || 0) + 1;
  console.log(JSON.stringify(counts));
} else if (mode === 'busy') {
  const n = Number(nText);
  const idle = Array.from({ length: n }, () => net.connect(port, '127.0.0.1'));
  await Promise.all(idle.map((s) => new Promise((ok) => s.on('connect', ok))));
  await new Promise((ok) => setTimeout(ok, 300));
  const r = await exchange(health);
  for (const s of idle) s.destroy();
  console.log(status(r));
} else if (mode === 'truncated') {
  const head = 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
    `${auth}Content-Length: 100\r\n\r\n{"messages": [`;
  const r = await exchange(head);
  console.log(`${status(r)} ${r.how}`);
} else if (mode === 'halfhead') {
  const r = await exchange('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  console.log(`${status(r)} ${r.how}`);
} else if (mode === 'leave') {
  const body = JSON.stringify({ messages: [{ role: 'user', content: 'Go on and on' }], temperature: 0, max_tokens: 100000, stream: true });
  await new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write('POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `${auth}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    const timer = setTimeout(() => { s.destroy(); resolve(); }, 20000);
    s.on('data', (d) => { if (d.toString('latin1').includes('data: ')) { clearTimeout(timer); s.destroy(); resolve(); } });
    s.on('error', () => { clearTimeout(timer); resolve(); });
  });
  console.log('left');
} else {
  console.error('unknown mode ' + mode);
  process.exit(2);
}

// load.mjs PORT CLIENTS SECONDS SEED: CLIENTS clients on loopback for
// SECONDS, each sending requests one after another: short and long
// prompts, chat and completions, streamed or not; one in five streams is
// dropped after its first event (a disconnect mid-stream). A 503 (queue
// full) waits a little and goes on. Every reply read to its end is
// checked: JSON with choices[0].finish_reason and usage, or a stream of
// data: events ending with a finish_reason and [DONE]. Prints a JSON
// summary: counts per outcome, and the malformed replies (bad_list, at most 5).
import http from 'node:http';

const [port, clients, seconds, seed0] = process.argv.slice(2).map(Number);
let seed = seed0 || 1;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const long = 'the quick brown fox jumps over the lazy dog, '.repeat(40);
const count = {ok: 0, stream_ok: 0, dropped: 0, busy: 0, bad: 0, error: 0};
const bad_list = [];
const end = Date.now() + seconds * 1000;

function one() {
  return new Promise(resolve => {
    const chat = rand() < 0.5, stream = rand() < 0.5, drop = stream && rand() < 0.2;
    const text = rand() < 0.3 ? long.slice(0, 200 + Math.floor(rand() * 800)) : 'Hello number ' + Math.floor(rand() * 1000);
    const max_tokens = 1 + Math.floor(rand() * 24);
    const body = JSON.stringify(chat ? {messages: [{role: 'user', content: text}], max_tokens, stream, temperature: rand() < 0.5 ? 0 : 0.8, seed: 7}
                                     : {prompt: text, max_tokens, stream});
    const rq = http.request({host: '127.0.0.1', port, method: 'POST', path: chat ? '/v1/chat/completions' : '/v1/completions',
                             headers: {'Content-Type': 'application/json'}}, res => {
      let data = '';
      if (res.statusCode === 503) { count.busy++; res.resume(); res.on('end', () => setTimeout(resolve, 50)); return; }
      res.on('error', () => {});
      res.setEncoding('utf8');
      res.on('data', d => {
        data += d;
        if (drop && data.includes('data: ')) { count.dropped++; rq.destroy(); resolve(); }
      });
      res.on('end', () => {
        if (drop && data.includes('data: ')) return;
        try {
          if (res.statusCode !== 200) throw new Error('status ' + res.statusCode + ' ' + data.slice(0, 200));
          if (stream) {
            const ev = data.split('\n\n').filter(e => e.length);
            if (ev[ev.length - 1] !== 'data: [DONE]') throw new Error('no [DONE]');
            const objs = ev.slice(0, -1).map(e => { if (!e.startsWith('data: ')) throw new Error('not an event'); return JSON.parse(e.slice(6)); });
            const last = objs[objs.length - 1];
            if (!last.choices[0].finish_reason || !last.usage) throw new Error('no finish_reason/usage');
            count.stream_ok++;
          } else {
            const r = JSON.parse(data);
            if (!r.choices[0].finish_reason || !r.usage || r.usage.completion_tokens > max_tokens) throw new Error('fields');
            count.ok++;
          }
        } catch (e) {
          count.bad++;
          if (bad_list.length < 5) bad_list.push(String(e.message).slice(0, 200));
        }
        resolve();
      });
    });
    rq.on('error', () => { if (!drop) count.error++; resolve(); });
    rq.on('close', resolve);
    rq.setTimeout(60000, () => rq.destroy());
    rq.end(body);
  });
}

async function client() {
  while (Date.now() < end) await one();
}
await Promise.all(Array.from({length: clients}, client));
process.stdout.write(JSON.stringify({...count, bad_list}));

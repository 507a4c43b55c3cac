// slots_bench.mjs PORT N [-n 64] [-r 3] [-long TOKENS] - pith serve's
// aggregate generation speed with N clients at once (tests/bench_slots.sh):
// N concurrent /v1/completions requests, each a short prompt of its own and
// -n tokens (the server runs with --ignore-eos so every reply is -n long).
// Aggregate = generated tokens / wall time from the first request to the
// last reply. After a warm-up, -r repetitions; prints each and the mean.
// With -long T: one client streams -n tokens while, after its 8th token,
// another sends a prompt of about T tokens; prints the worst gap between
// two tokens of the running stream (the time a long prompt holds it).
import http from 'node:http';

const args = process.argv.slice(2);
const opt = {n: 64, r: 3, long: 0};
const pos = [];
for (let i = 0; i < args.length; i++) {
    const flag = args[i].replace(/^-/, '');
    if (args[i].startsWith('-') && flag in opt && i + 1 < args.length) opt[flag] = Number(args[++i]);
    else pos.push(args[i]);
}
const [port, N] = pos.map(Number);
const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];

function post(body, onData) {
    return new Promise((resolve, reject) => {
        const rq = http.request({host: '127.0.0.1', port, method: 'POST', path: '/v1/completions',
                                 headers: {'Content-Type': 'application/json'}}, res => {
            let data = '';
            res.setEncoding('utf8');
            res.on('data', d => { data += d; if (onData) onData(d); });
            res.on('end', () => resolve(data));
        });
        rq.on('error', reject);
        rq.end(JSON.stringify(body));
    });
}
async function round(k) {
    const t0 = process.hrtime.bigint();
    const replies = await Promise.all(Array.from({length: N}, (_, i) =>
        post({prompt: `${words[(i + k) % 8]} ${i} ${k}: once upon a time`, max_tokens: opt.n, temperature: 0})));
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    const gen = replies.map(r => JSON.parse(r).usage.completion_tokens).reduce((a, b) => a + b, 0);
    return gen / s;
}
if (opt.long) {
    let last = 0n, worst = 0, count = 0, longDone = null, longT0 = 0n, longMs = 0;
    // the vocabulary decides how many tokens a sentence makes: ask the server
    const sentence = 'the quick brown fox jumps over the lazy dog ';
    const probe = JSON.parse(await post({prompt: sentence.repeat(10), max_tokens: 1, temperature: 0}));
    const perSentence = probe.usage.prompt_tokens / 10;
    const longPrompt = sentence.repeat(Math.max(1, Math.floor(opt.long / perSentence)));
    const stream = post({prompt: 'once upon a time', max_tokens: opt.n, temperature: 0, stream: true}, d => {
        const now = process.hrtime.bigint();
        const events = (d.match(/"text":"/g) || []).length;
        if (!events) return;
        if (last && count >= 8) worst = Math.max(worst, Number(now - last) / 1e6);
        last = now;
        count += events;
        if (count >= 8 && !longDone) {
            longT0 = process.hrtime.bigint();
            longDone = post({prompt: longPrompt, max_tokens: 1, temperature: 0}).then(r => {
                longMs = Number(process.hrtime.bigint() - longT0) / 1e6;
                return r;
            });
        }
    });
    await stream;
    const lr = JSON.parse(await longDone);
    if (!lr.usage) throw new Error(`the long prompt failed: ${JSON.stringify(lr)}`);
    console.log(`pith: a ${lr.usage.prompt_tokens}-token prompt sent during a ${opt.n}-token stream: worst gap between ` +
                `two of the stream's tokens ${worst.toFixed(0)} ms (prompt took ` +
                (lr.timings ? `${lr.timings.prompt_ms.toFixed(0)} ms)` : `${longMs.toFixed(0)} ms with its reply, at the client)`));
} else {
    await round(100); // warm-up
    const v = [];
    for (let i = 0; i < opt.r; i++) v.push(await round(i));
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    console.log(`pith ${N} clients: aggregate ${mean.toFixed(1)} tok/s (runs ${v.map(x => x.toFixed(1)).join(', ')})`);
}

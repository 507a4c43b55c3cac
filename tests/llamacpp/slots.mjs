// slots.mjs MODEL N [-n 64] [-p 16] [-t 2] [-r 3] - llama.cpp's aggregate
// generation speed with N sequences at once, for `pith serve --slots`
// (tests/bench_slots.sh): one context with N sequences; each gets its own
// prompt of -p random tokens and generates -n tokens greedily, all N
// concurrently (node-llama-cpp batches the sequences' tokens into one
// llama_decode per step). Aggregate = N * n / wall time from the first
// prompt to the last token (prompts included, as for pith's figure).
// After a warm-up, -r repetitions; prints each and the mean.
import {getLlama} from "node-llama-cpp";

const args = process.argv.slice(2);
const opt = {n: 64, p: 16, t: 2, r: 3};
const pos = [];
for (let i = 0; i < args.length; i++) {
    const flag = args[i].replace(/^-/, "");
    if (args[i].startsWith("-") && flag in opt && i + 1 < args.length) opt[flag] = Number(args[++i]);
    else pos.push(args[i]);
}
const [modelPath, nStr] = pos;
const N = Number(nStr);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({sequences: N, contextSize: N * (opt.p + opt.n + 16), batchSize: 64,
                                           threads: opt.t});
const seqs = Array.from({length: N}, () => context.getSequence());
let seed = 4242;
const randomToken = () => (seed = (seed * 1103515245 + 12345) % 2147483648) % 30000;

async function one(seq) {
    await seq.clearHistory();
    const prompt = Array.from({length: opt.p}, randomToken);
    let count = 0;
    for await (const token of seq.evaluate(prompt, {temperature: 0})) {
        void token;
        if (++count >= opt.n) break;
    }
    return count;
}
async function round() {
    const t0 = process.hrtime.bigint();
    const counts = await Promise.all(seqs.map(one));
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    return counts.reduce((a, b) => a + b, 0) / s;
}
await round(); // warm-up
const v = [];
for (let i = 0; i < opt.r; i++) v.push(await round());
const mean = v.reduce((a, b) => a + b, 0) / v.length;
console.log(`llama.cpp ${modelPath} ${N} sequences, threads ${opt.t}: aggregate ${mean.toFixed(1)} tok/s (runs ${v.map(x => x.toFixed(1)).join(", ")})`);

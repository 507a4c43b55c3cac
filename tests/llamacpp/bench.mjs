// bench.mjs MODEL [-p 64] [-n 64] [-r 3] [-t 2] - llama.cpp's prompt and
// generation speed on a GGUF file, measured like `pith bench` and
// llama-bench: after one warm-up, -r repetitions of (a) a prompt of -p
// random tokens evaluated as one batch into an empty cache and (b) -n
// tokens generated greedily one at a time. Prints mean ± sd tokens/s.
// llama.cpp comes from npm's node-llama-cpp (prebuilt, CPU).
import {getLlama} from "node-llama-cpp";

const args = process.argv.slice(2);
const opt = {p: 64, n: 64, r: 3, t: 2};
let modelPath = null;
for (let i = 0; i < args.length; i++) {
    const flag = args[i].replace(/^-/, "");
    if (flag in opt && i + 1 < args.length) opt[flag] = Number(args[++i]);
    else modelPath = args[i];
}
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: Math.max(opt.p, opt.n) + 16, batchSize: Math.max(opt.p, 1),
                                           threads: opt.t});
const sequence = context.getSequence();
const nVocab = model.fileInfo.metadata?.tokenizer?.ggml?.tokens?.length ?? 256;
let seed = 12345;
const randomToken = () => (seed = (seed * 1103515245 + 12345) % 2147483648) % Math.min(nVocab, 30000);

async function prompt() {
    await sequence.clearHistory();
    const tokens = Array.from({length: opt.p}, randomToken);
    const t0 = process.hrtime.bigint();
    await sequence.evaluateWithoutGeneratingNewTokens(tokens);
    return opt.p / (Number(process.hrtime.bigint() - t0) / 1e9);
}
/* Greedy generation inside node-llama-cpp's own loop (one llama_decode per
 * token, sampled in C++): feeding tokens one call at a time from JS was
 * measured slower, the threads idling between calls. The clock starts
 * after the first generated token, which also decodes the 1-token prompt. */
async function generate() {
    await sequence.clearHistory();
    let count = 0, t0 = 0n;
    for await (const token of sequence.evaluate([randomToken()], {temperature: 0})) {
        void token;
        if (count++ === 0) t0 = process.hrtime.bigint();
        if (count > opt.n) break;
    }
    return opt.n / (Number(process.hrtime.bigint() - t0) / 1e9);
}
const stats = v => {
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const sd = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, v.length - 1));
    return `${mean.toFixed(2)} ± ${sd.toFixed(2)}`;
};
await prompt(); await generate(); // warm-up
const pp = [], tg = [];
for (let i = 0; i < opt.r; i++) { pp.push(await prompt()); tg.push(await generate()); }
console.log(`llama.cpp ${modelPath} threads ${opt.t}: pp${opt.p} ${stats(pp)} tok/s, tg${opt.n} ${stats(tg)} tok/s`);

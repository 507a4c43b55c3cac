// longctx.mjs MODEL [P] [-t 2] - llama.cpp's speed at a long context: a
// prompt of P random tokens (default 2043) evaluated in batches of 64 with
// flash attention off (attention as pith does it, an F16 KV cache), then 64
// tokens generated greedily after it. Prints both in tokens/s. Compare
// with `pith run MODEL -c 4096 -p TEXT -n 64` on a prompt of the same
// length (docs/performance-x86.md).
import {getLlama} from "node-llama-cpp";

const args = process.argv.slice(2);
let modelPath = null, P = 2043, threads = 2;
for (let i = 0; i < args.length; i++) {
    if (args[i] === "-t" && i + 1 < args.length) threads = Number(args[++i]);
    else if (!modelPath) modelPath = args[i];
    else P = Number(args[i]);
}
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: P + 128, batchSize: 64, threads, flashAttention: false});
const sequence = context.getSequence();
let seed = 12345;
const randomToken = () => (seed = (seed * 1103515245 + 12345) % 2147483648) % 30000;
let t0 = process.hrtime.bigint();
await sequence.evaluateWithoutGeneratingNewTokens(Array.from({length: P}, randomToken));
const pp = P / (Number(process.hrtime.bigint() - t0) / 1e9);
let count = 0;
t0 = 0n;
for await (const token of sequence.evaluate([randomToken()], {temperature: 0})) {
    void token;
    if (count++ === 0) t0 = process.hrtime.bigint();
    if (count > 64) break;
}
const tg = 64 / (Number(process.hrtime.bigint() - t0) / 1e9);
console.log(`llama.cpp ${modelPath} threads ${threads}: pp${P} ${pp.toFixed(1)} tok/s, tg64 after it ${tg.toFixed(1)} tok/s`);

// logits.mjs MODEL IDS OUT.f32 - llama.cpp's logits for every position of a
// prompt, written as little-endian float32 [n_pos][n_vocab] like the fixtures.
// llama.cpp comes from npm's node-llama-cpp (a prebuilt llama.cpp for
// linux-x64, CPU only). Same settings as the fixtures' reference: F32 KV
// cache and no flash attention (which rounds K and V through F16).
// One thread, as the fixtures were made: the same bytes as two threads
// (llama.cpp gives each output row to one thread), and no second thread
// spinning between the operations of every token.
import {getLlama} from "node-llama-cpp";
import {writeFileSync} from "node:fs";

const [modelPath, idsCsv, outPath] = process.argv.slice(2);
const ids = idsCsv.split(",").map(Number);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({
    contextSize: Math.max(64, ids.length + 8), batchSize: 512, threads: 1, flashAttention: false,
    experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
});
const results = await context.getSequence().controlledEvaluate(ids.map(t => [t, {generateNext: {logits: true}}]));
const nVocab = results[0].next.logits.size;
const out = new Float32Array(nVocab * ids.length);
results.forEach((r, pos) => { for (const [token, logit] of r.next.logits) out[pos * nVocab + token] = logit; });
writeFileSync(outPath, Buffer.from(out.buffer));

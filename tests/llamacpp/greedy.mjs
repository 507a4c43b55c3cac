// greedy.mjs MODEL IDS N - llama.cpp's greedy continuation of a prompt: N
// tokens, each the argmax of the logits after the previous one, printed as
// one line "id:gap,id:gap,..." where gap is the distance between the best
// and the second-best logit (the fixtures' greedy cases, README section 6:
// an engine must agree up to the first step whose gap is below its
// class's threshold). Same settings as logits.mjs (F32 KV cache, no flash
// attention, one thread).
import {getLlama} from "node-llama-cpp";

const [modelPath, idsCsv, nText] = process.argv.slice(2);
const ids = idsCsv.split(",").map(Number);
const n = Number(nText);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({
    contextSize: Math.max(64, ids.length + n + 8), batchSize: 512, threads: 1, flashAttention: false,
    experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
});
const sequence = context.getSequence();
const out = [];
let input = ids.map((t, i) => (i === ids.length - 1 ? [t, {generateNext: {logits: true}}] : t));
for (let step = 0; step < n; step++) {
    const results = await sequence.controlledEvaluate(input);
    const logits = results[results.length - 1].next.logits;
    let best = -1, bestV = -Infinity, second = -Infinity;
    for (const [token, v] of logits) {
        if (v > bestV) { second = bestV; bestV = v; best = token; }
        else if (v > second) second = v;
    }
    out.push(`${best}:${(bestV - second).toPrecision(4)}`);
    input = [[best, {generateNext: {logits: true}}]];
}
console.log(out.join(","));

// refs.mjs - llama.cpp's references for many models from one process:
// starting node and llama.cpp costs about 2 CPU seconds, more than the
// references of a small model (tests/llamacpp_lib.sh starts it once per test
// script and sends it one request per model).
//
// Reads requests from stdin, one per line, tab separated, and answers each
// in order by writing OUT and then a line to stdout, "refs: ok" (or "refs:
// error: ..." with OUT not written), which the shell waits for with a
// blocking read (skipping any other line llama.cpp might print):
//   logits MODEL IDS OUT    every position's logits, as logits.mjs
//   greedy MODEL IDS N OUT  N greedy tokens "id:gap,...", as greedy.mjs
//   tokenize MODEL TEXTS.json OUT  one line of ids per text, as tokenize.mjs
//   detokenize MODEL IDS.json OUT  a JSON string per list of ids (IDS.json: an
//                           array of arrays), llama_detokenize with special tokens
// The settings are those of logits.mjs and greedy.mjs: F32 KV cache, no
// flash attention, one thread.
import {getLlama} from "node-llama-cpp";
import {readFileSync, writeFileSync, statSync} from "node:fs";
import {createInterface} from "node:readline";

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});

async function withContext(modelPath, size, fn) {
    const model = await llama.loadModel({modelPath});
    try {
        const context = await model.createContext({
            contextSize: size, batchSize: 512, threads: 1, flashAttention: false,
            experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
        });
        try { return await fn(context.getSequence()); } finally { await context.dispose(); }
    } finally { await model.dispose(); }
}

async function logits(modelPath, ids) {
    return withContext(modelPath, Math.max(64, ids.length + 8), async sequence => {
        const results = await sequence.controlledEvaluate(ids.map(t => [t, {generateNext: {logits: true}}]));
        const nVocab = results[0].next.logits.size;
        const out = new Float32Array(nVocab * ids.length);
        results.forEach((r, pos) => { for (const [token, logit] of r.next.logits) out[pos * nVocab + token] = logit; });
        return Buffer.from(out.buffer);
    });
}

async function greedy(modelPath, ids, n) {
    return withContext(modelPath, Math.max(64, ids.length + n + 8), async sequence => {
        const out = [];
        let input = ids.map((t, i) => (i === ids.length - 1 ? [t, {generateNext: {logits: true}}] : t));
        for (let step = 0; step < n; step++) {
            const results = await sequence.controlledEvaluate(input);
            const lg = results[results.length - 1].next.logits;
            let best = -1, bestV = -Infinity, second = -Infinity;
            for (const [token, v] of lg) {
                if (v > bestV) { second = bestV; bestV = v; best = token; }
                else if (v > second) second = v;
            }
            out.push(`${best}:${(bestV - second).toPrecision(4)}`);
            input = [[best, {generateNext: {logits: true}}]];
        }
        return out.join(",") + "\n";
    });
}

// A vocabulary stays loaded for the requests that follow on the same file
// (t_tokenize_bpe.sh sends two or three sets of texts per vocabulary of
// 128,000-200,000 pieces, a few CPU seconds to load each time): keyed by
// path, size and modification time.
const vocabs = new Map();
async function vocab(modelPath) {
    const st = statSync(modelPath), key = `${modelPath}\t${st.size}\t${st.mtimeMs}`;
    if (!vocabs.has(key)) vocabs.set(key, await llama.loadModel({modelPath, vocabOnly: true}));
    return vocabs.get(key);
}

async function tokenize(modelPath, textsPath) {
    const model = await vocab(modelPath);
    return JSON.parse(readFileSync(textsPath, "utf8"))
        .map(text => Array.from(model.tokenize(text, true)).join(" ") + "\n").join("");
}

async function detokenize(modelPath, idsPath) {
    const model = await vocab(modelPath);
    return JSON.parse(readFileSync(idsPath, "utf8")).map(ids => JSON.stringify(model.detokenize(ids, true)) + "\n").join("");
}

// What llama.cpp makes of a vocabulary, as tests/tools/tokenize_files --info
// prints pith's: "bos B eos E add_bos A eog ID..." (add_bos: whether a prompt
// gets BOS; eog: every id that ends generation).
async function info(modelPath) {
    const model = await vocab(modelPath);
    const n = model.fileInfo.metadata.tokenizer.ggml.tokens.length, eog = [];
    for (let id = 0; id < n; id++) if (model.isEogToken(id)) eog.push(id);
    return `bos ${model.tokens.bos ?? -1} eos ${model.tokens.eos ?? -1} ` +
           `add_bos ${model.tokens.shouldPrependBosToken ? 1 : 0} eog ${eog.join(" ")}\n`;
}

// The answer, once OUT is written: one line.
function done(text) {
    process.stdout.write("refs: " + text.replace(/\n/g, " ") + "\n");
}

for await (const line of createInterface({input: process.stdin})) {
    if (!line.trim()) continue;
    const f = line.split("\t");
    const out = f[f.length - 1];
    try {
        const ids = ["tokenize", "detokenize", "info"].includes(f[0]) ? [] : f[2].split(",").map(Number);
        if (f[0] === "tokenize" && f.length === 4) writeFileSync(out, await tokenize(f[1], f[2]));
        else if (f[0] === "info" && f.length === 3) writeFileSync(out, await info(f[1]));
        else if (f[0] === "detokenize" && f.length === 4) writeFileSync(out, await detokenize(f[1], f[2]));
        else if (f[0] === "logits" && f.length === 4) writeFileSync(out, await logits(f[1], ids));
        else if (f[0] === "greedy" && f.length === 5) writeFileSync(out, await greedy(f[1], ids, Number(f[3])));
        else throw new Error(`bad request '${line.slice(0, 200)}'`);
        done("ok");
    } catch (e) {
        done(`error: ${String(e && e.message || e).split("\n")[0]}`);
    }
}

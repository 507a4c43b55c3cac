// grammar_bench.mjs MODEL SCHEMA.json [-n 32] [-t 1] - llama.cpp's generation
// speed on a GGUF file without and with a JSON schema grammar (node-llama-cpp's
// createGrammarForJsonSchema), sampled at temperature 0.7, top-k 20 (Qwen3's
// no-think defaults, as `pith run --no-think`), one prompt token, back to back.
import {getLlama, LlamaGrammarEvaluationState} from "node-llama-cpp";
import fs from "fs";

const args = process.argv.slice(2);
const opt = {n: 32, t: 1};
const pos = [];
for (let i = 0; i < args.length; i++) {
    const flag = args[i].replace(/^-/, "");
    if (flag in opt && i + 1 < args.length) opt[flag] = Number(args[++i]);
    else pos.push(args[i]);
}
const [modelPath, schemaPath] = pos;
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: opt.n + 64, batchSize: 16, threads: opt.t});
const sequence = context.getSequence();
const grammar = await llama.createGrammarForJsonSchema(JSON.parse(fs.readFileSync(schemaPath, "utf8")));
const prompt = model.tokenize("[");
async function run(withGrammar) {
    await sequence.clearHistory();
    const o = {temperature: 0.7, topK: 20, topP: 0.8, seed: 1};
    if (withGrammar) o.grammarEvaluationState = new LlamaGrammarEvaluationState({model, grammar});
    let count = 0, t0 = 0n;
    for await (const token of sequence.evaluate(prompt, o)) {
        void token;
        if (count++ === 0) t0 = process.hrtime.bigint();
        if (count > opt.n) break;
    }
    return 1e3 * (Number(process.hrtime.bigint() - t0) / 1e9) / opt.n;
}
await run(false);
const a = await run(false), b = await run(true);
console.log(`llama.cpp ${modelPath} threads ${opt.t}: ${a.toFixed(1)} ms per token without a grammar, ${b.toFixed(1)} ms with the schema (+${(b - a).toFixed(1)} ms)`);

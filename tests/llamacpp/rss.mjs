// rss.mjs MODEL CTX [N] - llama.cpp's peak resident set (VmHWM) with a
// context of CTX positions after feeding N tokens (default 32) one by one,
// and node's own peak before the model is loaded; for docs/memory.md's memory
// table (pith's own numbers: tests/measure_memory.sh). Installed next to
// node-llama-cpp by install.sh:
//   sh tests/llamacpp/install.sh && node build/node-llama-cpp/rss.mjs MODEL 512 32
import {getLlama} from "node-llama-cpp";
import {readFileSync} from "fs";

const [modelPath, ctx, n] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4] ?? 32)];
const peakMiB = () => Number(readFileSync("/proc/self/status", "utf8").match(/VmHWM:\s+(\d+)/)[1]) / 1024;
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const nodeAlone = peakMiB();
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: ctx, threads: 2});
const sequence = context.getSequence();
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) await sequence.evaluateWithoutGeneratingNewTokens([100 + i]);
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`llama.cpp ${modelPath} context ${ctx}: peak RSS ${peakMiB().toFixed(1)} MiB ` +
            `(node alone ${nodeAlone.toFixed(1)} MiB), ${n} tokens one by one ${(n / seconds).toFixed(1)} tok/s`);

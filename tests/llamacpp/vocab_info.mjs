// vocab_info.mjs MODEL - what llama.cpp makes of a vocabulary, on one line
// as tests/tools/tokenize_files --info prints pith's: "bos B eos E add_bos A
// eog ID..." (add_bos: whether a prompt gets BOS; eog: every id that ends
// generation). Loads only the vocabulary.
import {getLlama} from "node-llama-cpp";

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: process.argv[2], vocabOnly: true});
const n = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
const eog = [];
for (let id = 0; id < n; id++) if (model.isEogToken(id)) eog.push(id);
console.log(`bos ${model.tokens.bos ?? -1} eos ${model.tokens.eos ?? -1} ` +
            `add_bos ${model.tokens.shouldPrependBosToken ? 1 : 0} eog ${eog.join(" ")}`);

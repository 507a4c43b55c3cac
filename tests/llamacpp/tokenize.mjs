// tokenize.mjs MODEL TEXTS.json - llama.cpp's token ids for each text of a
// JSON array (special tokens parsed, no BOS added), one line of space
// separated ids per text, loading only the vocabulary.
import {getLlama} from "node-llama-cpp";
import {readFileSync} from "node:fs";

const [modelPath, textsPath] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath, vocabOnly: true});
for (const text of JSON.parse(readFileSync(textsPath, "utf8")))
    console.log(Array.from(model.tokenize(text, true)).join(" "));

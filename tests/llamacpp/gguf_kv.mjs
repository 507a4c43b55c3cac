// gguf_kv.mjs - writes a GGUF file of key-value pairs only (no tensors):
// the vocabulary files of bpe_vocab.mjs and gemma3_vocab.mjs. Keys are
// written in the order they are added.
import {writeFileSync} from "node:fs";

export function ggufKv() {
    const parts = [], kvs = [];
    const u32 = v => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
    const u64 = v => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
    const str = s => { const b = Buffer.from(s, "utf8"); u64(b.length); parts.push(b); };
    const kv = (key, write) => kvs.push([key, write]);
    return {
        u32: (k, v) => kv(k, () => { u32(4); u32(v); }),
        f32: (k, v) => kv(k, () => { u32(6); const b = Buffer.alloc(4); b.writeFloatLE(v); parts.push(b); }),
        bool: (k, v) => kv(k, () => { u32(7); parts.push(Buffer.from([v ? 1 : 0])); }),
        str: (k, v) => kv(k, () => { u32(8); str(v); }),
        strs: (k, a) => kv(k, () => { u32(9); u32(8); u64(a.length); for (const s of a) str(s); }),
        // an array of numbers as a typed array holds them: GGUF type 5 (Int32Array) or 6 (Float32Array)
        nums: (k, a) => kv(k, () => {
            u32(9); u32(a instanceof Float32Array ? 6 : 5); u64(a.length); parts.push(Buffer.from(a.buffer));
        }),
        write(outPath) {
            parts.push(Buffer.from("GGUF")); u32(3); u64(0); u64(kvs.length);
            for (const [k, write] of kvs) { str(k); write(); }
            const len = parts.reduce((s, b) => s + b.length, 0);
            parts.push(Buffer.alloc((32 - (len % 32)) % 32));
            writeFileSync(outPath, Buffer.concat(parts));
        },
    };
}

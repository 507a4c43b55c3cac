#!/usr/bin/env python3
"""Writes the GGUF seeds of the fuzz harnesses: tiny complete models (qwen3
and llama architectures, F32/F16/Q8_0 weights, a byte-level BPE vocabulary
of 262 tokens, the ChatML template), small enough for libFuzzer to mutate.

    python3 tests/fuzz/make_seeds.py   (from the repository root)

Writes tests/fuzz/seeds/gguf/*.gguf and tests/fuzz/seeds/model/*.gguf."""
import os
import random
import struct

U32, I32, F32, STR, ARR = 4, 5, 6, 8, 9
T_F32, T_F16, T_Q8_0 = 0, 1, 8
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack('<Q', len(b)) + b


def byte_chars():
    """GPT-2's byte-to-character table of byte-level BPE."""
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def vocab():
    bc = byte_chars()
    tokens = [bc[b] for b in range(256)]
    types = [1] * 256
    merges = ['h e', '\u0120 t', '\u0120t he', 'l l', 'o \u0120']
    for m in merges:
        tokens.append(m.replace(' ', ''))
        types.append(1)
    for s in ['<|endoftext|>', '<|im_start|>', '<|im_end|>']:
        tokens.append(s)
        types.append(3)
    return tokens, types, merges


def f16(x):
    return struct.pack('<e', x)


def tensor_bytes(vals, ttype):
    if ttype == T_F32:
        return b''.join(struct.pack('<f', v) for v in vals)
    if ttype == T_F16:
        return b''.join(f16(v) for v in vals)
    out = b''
    for i in range(0, len(vals), 32):
        blk = vals[i:i + 32]
        d = max(abs(v) for v in blk) / 127 or 1.0
        out += f16(d) + bytes((round(v / d) & 0xff) for v in blk)
    return out


def model(path, arch, ttype, embd, ff, heads, kv_heads, head_dim, layers, seed):
    rnd = random.Random(seed)
    tokens, types, merges = vocab()
    kv = []

    def add(key, t, payload):
        kv.append(gstr(key) + struct.pack('<I', t) + payload)

    add('general.architecture', STR, gstr(arch))
    for k, v in [('block_count', layers), ('embedding_length', embd), ('feed_forward_length', ff),
                 ('attention.head_count', heads), ('attention.head_count_kv', kv_heads),
                 ('attention.key_length', head_dim), ('attention.value_length', head_dim), ('context_length', 64)]:
        add(f'{arch}.{k}', U32, struct.pack('<I', v))
    add(f'{arch}.rope.freq_base', F32, struct.pack('<f', 10000.0))
    add(f'{arch}.attention.layer_norm_rms_epsilon', F32, struct.pack('<f', 1e-6))
    add('tokenizer.ggml.model', STR, gstr('gpt2'))
    add('tokenizer.ggml.pre', STR, gstr('qwen2'))
    add('tokenizer.ggml.tokens', ARR, struct.pack('<IQ', STR, len(tokens)) + b''.join(gstr(t) for t in tokens))
    add('tokenizer.ggml.token_type', ARR, struct.pack('<IQ', I32, len(types)) + b''.join(struct.pack('<i', t) for t in types))
    add('tokenizer.ggml.merges', ARR, struct.pack('<IQ', STR, len(merges)) + b''.join(gstr(m) for m in merges))
    add('tokenizer.ggml.bos_token_id', U32, struct.pack('<I', 261))
    add('tokenizer.ggml.eos_token_id', U32, struct.pack('<I', 263))
    add('tokenizer.chat_template', STR, gstr(CHATML))

    n_vocab = len(tokens)
    ts = []  # (name, ne, type, values)

    def t(name, ne, norm=False):
        n = 1
        for d in ne:
            n *= d
        vals = [(1.0 + 0.1 * rnd.uniform(-1, 1)) if norm else rnd.uniform(-1, 1) / ne[0] ** 0.5 for _ in range(n)]
        ts.append((name, ne, T_F32 if norm else ttype, vals))

    t('token_embd.weight', [embd, n_vocab])
    t('output_norm.weight', [embd], True)
    for l in range(layers):
        t(f'blk.{l}.attn_norm.weight', [embd], True)
        t(f'blk.{l}.attn_q.weight', [embd, heads * head_dim])
        t(f'blk.{l}.attn_k.weight', [embd, kv_heads * head_dim])
        t(f'blk.{l}.attn_v.weight', [embd, kv_heads * head_dim])
        t(f'blk.{l}.attn_output.weight', [heads * head_dim, embd])
        if arch == 'qwen3':
            t(f'blk.{l}.attn_q_norm.weight', [head_dim], True)
            t(f'blk.{l}.attn_k_norm.weight', [head_dim], True)
        t(f'blk.{l}.ffn_norm.weight', [embd], True)
        t(f'blk.{l}.ffn_gate.weight', [embd, ff])
        t(f'blk.{l}.ffn_up.weight', [embd, ff])
        t(f'blk.{l}.ffn_down.weight', [ff, embd])

    infos, data = b'', b''
    for name, ne, tt, vals in ts:
        pad = (-len(data)) % 32
        data += b'\0' * pad
        infos += gstr(name) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', d) for d in ne)
        infos += struct.pack('<IQ', tt, len(data))
        data += tensor_bytes(vals, tt)
    head = b'GGUF' + struct.pack('<IQQ', 3, len(ts), len(kv)) + b''.join(kv) + infos
    head += b'\0' * ((-len(head)) % 32)
    with open(path, 'wb') as f:
        f.write(head + data)


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'seeds')
    specs = [
        ('qwen3-f32', 'qwen3', T_F32, 8, 16, 2, 1, 4, 1),
        ('qwen3-f16-2layers', 'qwen3', T_F16, 8, 8, 2, 2, 4, 2),
        ('qwen3-q8_0', 'qwen3', T_Q8_0, 32, 32, 2, 1, 16, 1),
        ('llama-f32', 'llama', T_F32, 8, 16, 2, 2, 4, 1),
    ]
    for sub in ('gguf', 'model'):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    for i, (name, arch, tt, embd, ff, heads, kvh, hd, layers) in enumerate(specs):
        for sub in ('gguf', 'model'):
            model(os.path.join(root, sub, name + '.gguf'), arch, tt, embd, ff, heads, kvh, hd, layers, 100 + i)


if __name__ == '__main__':
    main()

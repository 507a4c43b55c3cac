#!/bin/sh
# t_tokenize_qwen35.sh - the qwen35 pre-tokenizer (Qwen3.5: letter runs
# take combining marks, \p{M}, too) against llama.cpp's (node-llama-cpp) on
# mkmodel's byte-level BPE vocabulary written with --pre qwen35, which also
# spells words with combining marks (decomposed café and naïve, Hindi):
# texts with marks after letters, alone, after spaces, punctuation, digits,
# newlines and contractions, in Latin, Devanagari, Thai and Hebrew.
. tests/lib.sh
. tests/tokenize_lib.sh
MK=${MK:-build/asan/tools/mkmodel}
llamacpp_install
VOCAB=$TMP/qwen35-vocab.gguf
if "$MK" "$VOCAB" --arch qwen35 --layers 4 --embd 64 --ff 64 --heads 2 --kv-heads 1 --head-dim 32 --rope-dim 16 \
        --ssm-state 16 --pre qwen35 >"$TMP/mk.out" 2>&1; then ok "a qwen35 vocabulary written"
else not_ok "mkmodel: $(head -c 300 "$TMP/mk.out")"; finish; fi

cat >"$TMP/texts.json" <<'JSON'
["the cafe\u0301 is nai\u0308ve", "cafe\u0301", " cafe\u0301!", "\u0301a \u0301the", "!!\u0301 !\u0301 ?\u0301x",
 "नमस्ते दुनिया", "e\u0301\u0301\u0301 x\u20dd", "Hello world 123", "naïve café déjà vu", "a\n\u0301b\r\n\u0301",
 "'s \u0301's 5\u0301 x5\u0301", "\u0e01\u0e34\u0e19 \u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd", "<|im_start|>user\ncafe\u0301<|im_end|>", ""]
JSON
tokenize_each qwen35 "$VOCAB" "$TMP/texts.json"
finish

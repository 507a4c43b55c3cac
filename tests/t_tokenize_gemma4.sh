#!/bin/sh
# t_tokenize_gemma4.sh - pith's "gemma4" tokenizer (Gemma 4's BPE on
# SentencePiece-style texts: spaces as U+2581, split only at newline runs,
# <0xNN> byte fallback) on the vocabulary llama.cpp tests it with
# (build/llamacpp-src/models/ggml-vocab-gemma-4.gguf, 262144 tokens,
# 514906 merges):
#   - (its .inp/.out vectors: tests/t_tokenize_vocab.sh, with the other
#     vocabularies of that folder)
#   - on 39 hand-picked texts (mixed scripts, emoji, combining marks, code
#     with tabs and CRLF, newline and space runs, digits, a written U+2581,
#     Gemma 4 chat turns with its special tokens), its chat as `pith
#     template` renders it and 40 random texts, pith's ids equal llama.cpp's
#     (node-llama-cpp, special tokens parsed) and decode to the text again
#     (a written U+2581 as a space);
#   - `pith tokenize --pieces` prints the pieces with their spaces; bos,
#     eos, add_bos and the end-of-generation ids are llama.cpp's
#     (tests/llamacpp_lib.sh's ref_info); a prompt (tokenizer_encode_prompt, as
#     `pith run` encodes it) starts with <bos> once: llama.cpp forces
#     add_bos for Gemma 4.
. tests/lib.sh
TOKF=${TOKF:-build/asan/tools/tokenize_files}
SRC=$(sh tests/llamacpp_src.sh 2>"$TMP/err") || { not_ok "llama.cpp source: $(cat "$TMP/err")"; finish; }
V=$SRC/models/ggml-vocab-gemma-4.gguf
[ -s "$V" ] && [ -s "$V.inp" ] && [ -s "$V.out" ] || { not_ok "no $V with .inp and .out"; finish; }

# split_texts JSON DIR: each string of the JSON array into DIR/text.N (no
# newline added), and the text its ids decode to into DIR/text.N.back: the
# same, but a U+2581 written in the text comes back as the space it stands
# for (llama.cpp's escaping makes them one); prints how many.
split_texts() {
    node -e 'const fs = require("fs"), texts = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
        texts.forEach((t, i) => { const f = process.argv[2] + "/text." + (i + 1);
            fs.writeFileSync(f, t); fs.writeFileSync(f + ".back", t.replaceAll("\u2581", " ")); });
        console.log(texts.length)' "$1" "$2"
}
# ids_files IDS DIR: each line of IDS into DIR/ids.N.
ids_files() {
    i=0
    while IFS= read -r line; do i=$((i + 1)); printf '%s' "$line" >"$2/ids.$i"; done <"$1"
}
# round_trip NAME DIR N [VOCAB]: the ids in DIR/ids.1..N decode on VOCAB
# (default $V) to DIR/text.1..N.back.
round_trip() {
    name=$1 dir=$2 n=$3 vocab=${4:-$V}
    files=$(i=0; while [ "$i" -lt "$n" ]; do i=$((i + 1)); printf '%s ' "$dir/ids.$i"; done)
    # shellcheck disable=SC2086 # files: words
    if ! "$TOKF" --decode "$vocab" $files 2>"$TMP/err"; then not_ok "$name: decode: $(head -c 300 "$TMP/err")"; return; fi
    i=0 bad=0
    while [ "$i" -lt "$n" ]; do
        i=$((i + 1))
        cmp -s "$dir/ids.$i.decoded" "$dir/text.$i.back" && continue
        bad=$((bad + 1))
        not_ok "$name text $i ($(head -c 60 "$dir/text.$i" | tr '\n' ' ')): decodes to '$(head -c 100 "$dir/ids.$i.decoded")'"
    done
    [ "$bad" -eq 0 ] && ok "$name: the ids of all $n texts decode to the text"
}

# 2. llama.cpp itself (node-llama-cpp) on the same file, special tokens
# parsed: hand-picked texts, Gemma 4's chat as `pith template` renders it,
# and random ones (tests/llamacpp/pretok_texts.mjs)
NODE_DIR=build/node-llama-cpp
if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
else not_ok "$(cat "$TMP/install.err")"; finish; fi
. tests/llamacpp_lib.sh
cat >"$TMP/texts.json" <<'JSON'
["Hello world", " Hello  world ", "   leading spaces and trailing   ", "a  b   c\t\td \n\n  e   \n", "\n", " ", "\t", "",
 "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\nend", " \n \n\n \t\n  \n  ",
 "\r\n\r\n line\r\nnext\r\n", "def f(x):\n\tif x:\r\n\t\treturn x ** 2  # square\r\n\treturn 0\n",
 "int main(void) {\n    printf(\"%d\\n\", 42);\n}\n", "    indented\n        more\n\t\ttabs\n\n",
 "The year 2025 had 365 days; 3.14159 and 1,000,000.", "0123456789 00000 1234567890123 ١٢٣٤٥ ½ ²³ Ⅻ",
 "naïve café, Straße, déjà vu", "e\u0301cole cafe\u0301 n\u0303o a\u0308\u0308b \u0301start",
 "नमस्ते दुनिया สวัสดีครับ مَرْحَبًا", "東京は日本の首都です。", "Привет, мир! ПриВЕТ", "안녕하세요 세계 שלום עולם",
 "Mixed: English, Français, Deutsch, 日本語, русский, العربية, हिन्दी", "emoji 🙂👍🏽 and ✨ 👨‍👩‍👧 🇫🇷!",
 "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𓀀 \udbff\udffd \ue000", "\u0001\u0002 x\u001cy\u007fz\u0085", "a\u00a0b\u2003c\u3000d \u00a0 e",
 "▁ already escaped ▁▁ spaces", "bytes <0x41><0xFF> as text", "I'm you're HE'S they'VE don't 'tis O'Neil rock'n'roll",
 "math: ∑ x² ≤ ∞, α→β, 3×4=12 ﬁ ﬂ ẞ ǅ", "https://example.com/path?q=1&r=two#frag ==========----------",
 "<|turn>user\nHi there<turn|>\n<|turn>model\n", "<bos><|turn>system\nYou are kind.<turn|>\n",
 "<|tool>declaration:get_weather{}<tool|><|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>",
 "<|tool_response>response:get_weather{temp:20}<tool_response|>", "<|channel>thought\n<channel|>The answer<turn|>",
 "<|think|> <|image|> <|audio|> <eos> <pad> <unk> <mask>", "<|turn <turn| <|turn>> text< <|\"|"]
JSON
# compare NAME TEXTS.json [VOCAB]: pith's ids equal llama.cpp's on VOCAB
# (default $V), and decode to the text.
compare() {
    name=$1 texts=$2 dir=$TMP/$1 vocab=${3:-$V}
    mkdir -p "$dir"
    if ! ref_tokenize "$vocab" "$texts" "$dir/ref"; then
        not_ok "$name: llama.cpp tokenize failed: $(tail -c 300 "$TMP/ref.err")"; return
    fi
    n=$(split_texts "$texts" "$dir")
    files=$(i=0; while [ "$i" -lt "$n" ]; do i=$((i + 1)); printf '%s ' "$dir/text.$i"; done)
    # shellcheck disable=SC2086 # files: words
    "$TOKF" "$vocab" $files >"$dir/got" 2>"$TMP/err" || { not_ok "$name: tokenize_files: $(head -c 300 "$TMP/err")"; return; }
    # (one awk over both files: a sed per line cost more than the tokenizing)
    bad=$(paste -d '\t' "$dir/got" "$dir/ref" | awk -F '\t' -v name="$name" -v dir="$dir" \
        '$1 != $2 { n++; printf "not ok - %s text %d (%s/text.%d): pith '"'"'%.200s'"'"' llama.cpp '"'"'%.200s'"'"'\n", name, NR, dir, NR, $1, $2 }
         END { if (n) exit 1 }')
    if [ -n "$bad" ]; then echo "$bad"; failures=$((failures + 1))
    elif [ "$n" -gt 0 ] && [ "$(wc -l <"$dir/got")" -eq "$n" ]; then ok "$name: $n texts, the same ids as llama.cpp"
    else not_ok "$name: $n texts, $(wc -l <"$dir/got") lines of ids"; fi
    ids_files "$dir/ref" "$dir"
    round_trip "$name" "$dir" "$n" "$vocab"
}
compare hand-picked "$TMP/texts.json"
printf '[{"role": "system", "content": "You are kind."}, {"role": "user", "content": "Hi there!"}, {"role": "assistant", "content": "Hello.\\n\\n  Bye."}, {"role": "user", "content": "2+2?"}]' >"$TMP/msgs.json"
if "$PITH" template "$V" --messages "$TMP/msgs.json" >"$TMP/chat.txt" 2>"$TMP/err"; then
    node -e 'console.log(JSON.stringify([require("fs").readFileSync(process.argv[1], "utf8")]))' "$TMP/chat.txt" >"$TMP/chat.json"
    compare chat "$TMP/chat.json"
else not_ok "pith template: $(head -c 300 "$TMP/err")"; fi
node "$NODE_DIR/pretok_texts.mjs" 4 40 600 >"$TMP/random.json"
compare random "$TMP/random.json"

# 3. pieces (escaped by pith: the messages show them with / for \, as
# lib.sh's echo would read \n), and BOS on a prompt
got=$("$PITH" tokenize "$V" --pieces "<|turn>user
 Hi  ½" 2>&1 | tr '\n\\' '|/')
[ "$got" = "105 '<|turn>'|2364 'user'|107 '/n'|18428 ' Hi'|138 '  '|238612 '½'|" ] && ok "pith tokenize --pieces: $got" ||
    not_ok "pith tokenize --pieces: $got"
# bos, eos, add_bos and the end-of-generation set as llama.cpp decides them
# (its add_bos forced on; <eos>, <turn|> and <|tool_response> end generation)
want=
if ref_info "$V" "$TMP/info"; then want=$(cat "$TMP/info"); else not_ok "llama.cpp's info: $(tail -c 300 "$TMP/ref.err")"; fi
got=$("$TOKF" --info "$V" 2>&1)
[ -n "$want" ] && [ "$got" = "model gemma4 $want" ] && ok "tokenize_files --info: $got, as llama.cpp" ||
    not_ok "tokenize_files --info: pith '$got' llama.cpp '$want'"
# a prompt as `pith run` encodes it: <bos> (2) first, once, also when the
# chat template wrote it
printf 'Hi there' >"$TMP/p1"
"$TOKF" --prompt "$V" "$TMP/p1" "$TMP/chat.txt" >"$TMP/prompt" 2>"$TMP/err" || not_ok "tokenize_files --prompt: $(head -c 300 "$TMP/err")"
p1=$(sed -n 1p "$TMP/prompt") p2=$(sed -n 2p "$TMP/prompt") c=$(sed -n 1p "$TMP/chat/ref")
[ "$p1" = "2 10979 993" ] && ok "prompt 'Hi there': <bos> first ($p1)" || not_ok "prompt 'Hi there': $p1"
case $c in 2\ *) [ "$p2" = "$c" ] && ok "chat prompt starting with <bos>: one <bos>, llama.cpp's ids" ||
    not_ok "chat prompt: pith '$(echo "$p2" | cut -c1-100)' llama.cpp '$(echo "$c" | cut -c1-100)'" ;;
*) not_ok "the chat rendering does not start with <bos>: $(echo "$c" | cut -c1-100)" ;;
esac
finish

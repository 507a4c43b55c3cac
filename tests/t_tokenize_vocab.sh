#!/bin/sh
# t_tokenize_vocab.sh - pith's tokenizers on llama.cpp's own test vocabularies
# and against llama.cpp (node-llama-cpp) under every pre-tokenizer name pith
# knows:
#   1. each models/ggml-vocab-*.gguf of llama.cpp's source (de3ff81) with its
#      .inp/.out vectors (test-tokenizer-0: special tokens not parsed) gives
#      exactly the .out ids, and those ids decode back to the text (not for
#      SentencePiece, which adds a space, nor WordPiece, which lowercases);
#      a vocabulary whose tokenizer model pith does not run is refused by
#      that name;
#   2. the vocabularies there without vectors (aquila and gpt-neox name no
#      pre-tokenizer: llama.cpp's default split; baichuan) against llama.cpp
#      on hand-picked and random texts;
#   3. every row of src/text/pretokenizer.c's table: GPT-2's vocabulary with
#      that name in tokenizer.ggml.pre against llama.cpp on the same file:
#      the first name of each list of regexes on hand-picked and random
#      texts (pretok_texts.mjs ... wide), the other names on the hand-picked
#      ones, and the ids decode back to the text.
# parts: vectors names
#   (vectors: 1. and 2.; names: 3.; run as two jobs by tests/run.sh)
. tests/lib.sh
llamacpp_install() {
    if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
    else not_ok "$(cat "$TMP/install.err")"; finish; fi
}
llamacpp_install
. tests/llamacpp_lib.sh
TOKF=${TOKF:-build/asan/tools/tokenize_files}
ED=${ED:-build/rel/tools/ggufedit}   # (writing the files is not what is tested)
if SRC=$(sh tests/llamacpp_src.sh 2>"$TMP/src.err"); then ok "llama.cpp's source ($SRC)"
else not_ok "$(cat "$TMP/src.err")"; finish; fi
M=$SRC/models

if part vectors; then
# ---- 1. the vectors ----
# tokenizer models pith does not run: the vocabulary must be refused by name
UNSUPPORTED="nomic-bert-moe:t5"
# vocabularies whose ids do not decode to the text as it was
NO_ROUND_TRIP="llama-spm phi-3 bert-bge"
n_vec=0
for inp in "$M"/ggml-vocab-*.gguf.inp; do
    vocab=${inp%.inp} name=$(basename "${inp%.gguf.inp}") name=${name#ggml-vocab-}
    rt=--round-trip
    case " $NO_ROUND_TRIP " in *" $name "*) rt= ;; esac
    # shellcheck disable=SC2086 # rt: empty or one word
    if ! "$TOKF" --vectors $rt "$vocab" "$inp" >"$TMP/got" 2>"$TMP/err"; then
        not_ok "$name: $(head -c 300 "$TMP/err")"; continue
    fi
    # (some .out files put a space before the ids, some do not)
    sed 's/^ //' "$vocab.out" >"$TMP/want"
    sed 's/^ //' "$TMP/got" >"$TMP/got1"
    if cmp -s "$TMP/got1" "$TMP/want"; then ok "$name: all $(wc -l <"$TMP/want") vectors of llama.cpp${rt:+, decoded back}"
    else not_ok "$name: $(diff "$TMP/got1" "$TMP/want" | head -c 400)"; fi
    n_vec=$((n_vec + 1))
done
[ "$n_vec" -eq 15 ] && ok "15 vocabularies with vectors checked" || not_ok "$n_vec vocabularies with vectors (want 15)"
for u in $UNSUPPORTED; do
    name=${u%%:*} model=${u#*:}
    if "$PITH" tokenize "$M/ggml-vocab-$name.gguf" "hi" >/dev/null 2>"$TMP/err"; then not_ok "$name: tokenized, expected a refusal"
    elif grep -q "tokenizer.ggml.model '$model' is not supported" "$TMP/err"; then ok "$name: refused by name ($model)"
    else not_ok "$name: $(head -c 300 "$TMP/err")"; fi
done

# bos, eos, add_bos and the ids that end generation, as llama.cpp decides
# them (Gemma 4's: t_tokenize_gemma4.sh, which loads its 262k tokens anyway)
bad=0 n_info=0
for vocab in "$M"/ggml-vocab-*.gguf; do
    case $vocab in *gemma-4*|*nomic-bert-moe*) continue ;; esac
    n_info=$((n_info + 1))
    got=$("$TOKF" --info "$vocab" 2>&1 | sed 's/^model [^ ]* //')
    if ! ref_info "$vocab" "$TMP/info"; then bad=$((bad + 1)); not_ok "$vocab: llama.cpp: $(tail -c 300 "$TMP/ref.err")"
    elif [ "$got" != "$(cat "$TMP/info")" ]; then
        bad=$((bad + 1)); not_ok "$(basename "$vocab"): pith '$got' llama.cpp '$(cat "$TMP/info")'"
    fi
done
[ "$bad" -eq 0 ] && ok "$n_info vocabularies: bos, eos, add_bos and the end-of-generation ids are llama.cpp's"
fi

# ---- 2. and 3.: against llama.cpp ----
cat >"$TMP/hand.json" <<'JSON'
["Hello world", " Hello  world ", "HelloWorld camelCase snake_case SCREAMING_CASE XMLHttpRequest iPhone",
 "ÉCOLE école Straße ΑΘΗΝΑ Αθήνα İstanbul ǅemal ABÉCD", "I'm you're HE'S they'VE we'LL she'd DON'T 'tis O'Neil",
 "e\u0301cole cafe\u0301 n\u0303o \u0301start नमस्ते दुनिया สวัสดีครับ مَرْحَبًا",
 "1 12 123 1234 12345 1234567 2025-11-24 3.14159 ١٢٣٤٥ ½ ²³ Ⅻ x1y22z333",
 "Hello!\n/path //x\n\r\n!!/\n/ ...\n\n/usr/bin a/b/c http://x.y/z?q=1&r=2 :)\r\n/ end.\n\n\n",
 "a  b   c\t\td \n\n  e   \n", "   leading", "trailing   ", "a\u00a0b\u2003c\u3000d \u00a0 e",
 "東京は日本の首都です。カタカナ、ひらがな！", "Привет, МИР!", "안녕하세요 세계 ㄱㄴ", "שלום עולם",
 "emoji 🙂👍🏽 and ✨ 👨‍👩‍👧 🇫🇷!", "<|endoftext|>x<|endoftext|>",
 "def f(x):\n\treturn x**2  # square\r\n", "a+=b; c<=d || e>=f && g!=h ~i ^j `k` $l @m #n %o",
 "price: 100€ or $5.99 (±2) → ok © 2024 µs", "“quoted” ‘single’ — dash… 。，、！：", "Ａｂｃ！ｚ～",
 "\u0800\u4e00\u9fa5\u9fa6 ʔƻ Ꭰ ﬀ", "\u0001\u0002 x\u001cy\u0085z\u007f \u00ad\u2028", "\n", " ", ""]
JSON
node "$NODE_DIR/pretok_texts.mjs" 35 200 300 wide >"$TMP/random.json"

# split_texts SET: $TMP/SET.json's texts into $TMP/SET/1, 2, ... (once)
split_texts() {
    mkdir -p "$TMP/$1"
    node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).forEach((t, i) =>
                 require("fs").writeFileSync(process.argv[2] + "/" + (i + 1), t))' "$TMP/$1.json" "$TMP/$1"
}
split_texts hand
split_texts random

# compare NAME VOCAB SET [--round-trip]: pith's ids of each text of $TMP/SET.json
# equal llama.cpp's (special tokens parsed, as pith tokenize does)
compare() {
    name=$1 vocab=$2 set=$3 rt=${4:-}
    if ! ref_tokenize "$vocab" "$TMP/$set.json" "$TMP/ref"; then not_ok "$name: llama.cpp: $(tail -c 300 "$TMP/ref.err")"; return; fi
    n=$(ls "$TMP/$set" | wc -l)
    files=$(i=0; while [ "$i" -lt "$n" ]; do i=$((i + 1)); printf '%s ' "$TMP/$set/$i"; done)
    # shellcheck disable=SC2086 # files, rt: words
    if ! "$TOKF" $rt "$vocab" $files >"$TMP/got" 2>"$TMP/err"; then
        not_ok "$name: $(head -c 300 "$TMP/err")"
    elif cmp -s "$TMP/got" "$TMP/ref" && [ "$(wc -l <"$TMP/got")" -eq "$n" ]; then
        ok "$name: $n texts, the same ids as llama.cpp${rt:+, decoded back}"
    else
        # the first three texts that differ
        paste -d '\t' "$TMP/got" "$TMP/ref" | awk -F '\t' -v name="$name" -v dir="$TMP/$set" \
            '$1 != $2 && ++bad <= 3 { printf "not ok - %s text %d (%s): pith '"'"'%.160s'"'"' llama.cpp '"'"'%.160s'"'"'\n", name, NR, dir "/" NR, $1, $2 }'
        failures=$((failures + 1))
    fi
}

part vectors && for v in aquila gpt-neox baichuan; do
    dec=--round-trip; [ "$v" = baichuan ] && dec=
    compare "$v hand-picked" "$M/ggml-vocab-$v.gguf" hand $dec
    compare "$v random" "$M/ggml-vocab-$v.gguf" random $dec
done

if part names; then
# every row of the table: "name", its regex list
sed -n 's/^ *{"\([^"]*\)", \(re_[a-z0-9_]*\),.*/\1 \2/p' src/text/pretokenizer.c >"$TMP/rows"
[ "$(wc -l <"$TMP/rows")" -ge 50 ] && ok "$(wc -l <"$TMP/rows") pre-tokenizer names in the table" ||
    not_ok "pre-tokenizer rows read from src/text/pretokenizer.c: $(wc -l <"$TMP/rows")"
seen=" "
while read -r pre list <&3; do
    V=$TMP/pre.gguf
    if ! "$ED" "$M/ggml-vocab-gpt-2.gguf" "$V" --set-str tokenizer.ggml.pre "$pre" >/dev/null 2>"$TMP/err"; then
        not_ok "ggufedit $pre: $(head -c 200 "$TMP/err")"; continue
    fi
    compare "$pre hand-picked" "$V" hand --round-trip
    case "$seen" in *" $list "*) ;; *)
        seen="$seen$list "
        compare "$pre random" "$V" random --round-trip ;;
    esac
done 3<"$TMP/rows"
fi
finish

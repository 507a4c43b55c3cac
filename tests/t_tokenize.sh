#!/bin/sh
# t_tokenize.sh - `pith tokenize` on a few texts and its error cases.
. tests/lib.sh
Q3=$FIX/tokenizer/qwen3-vocab.gguf
Q2=$FIX/tokenizer/ggml-vocab-qwen2.gguf

# expect_out NAME WANT COMMAND...: passes when stdout is exactly WANT (one line).
expect_out() {
    name=$1 want=$2; shift 2
    if "$@" >"$TMP/out" 2>"$TMP/err" && [ "$(cat "$TMP/out")" = "$want" ]; then ok "$name"
    else not_ok "$name: got '$(head -c 300 "$TMP/out")' $(head -c 300 "$TMP/err")"; fi
}

expect_out "hello world" "9707 1879" $PITH tokenize "$Q3" "Hello world"
expect_out "hello world, read backend" "9707 1879" $PITH tokenize "$Q3" "Hello world" --no-mmap
expect_out "qwen2 vocab, digits one by one" "18 18 18" $PITH tokenize "$Q2" "333"
expect_out "special tokens parsed" "151644 872 198 13048 151645" $PITH tokenize "$Q3" "<|im_start|>user
Hi<|im_end|>"
expect_out "--no-special: control token is text" "27 91 318 4906 91 29" $PITH tokenize "$Q3" "<|im_start|>" --no-special
expect_out "--no-special: user-defined <think> still one token" "151667" $PITH tokenize "$Q3" "<think>" --no-special
expect_out "empty text" "" $PITH tokenize "$Q3" ""

# --file: the first chat rendering gives its reference ids
C=$FIX/chat/pub_chat_single_user
expect_out "--file chat rendering" "$(tr ',' ' ' <"$C.ids" | tr -d '\n')" $PITH tokenize "$Q3" --file "$C.txt"
expect_out "--file, read backend" "$(tr ',' ' ' <"$C.ids" | tr -d '\n')" $PITH tokenize "$Q3" --file "$C.txt" --no-mmap

# --pieces: one line per token, escaped
$PITH tokenize "$Q3" --pieces "Hi
<think>" >"$TMP/pieces" 2>"$TMP/err"
if [ "$(cat "$TMP/pieces")" = "$(printf "13048 'Hi'\n198 '\\\\n'\n151667 '<think>'")" ]; then ok "--pieces"
else not_ok "--pieces: $(cat "$TMP/pieces")"; fi

# invalid UTF-8 and NUL bytes in a file: no crash, some ids
printf 'a\377\000b\300' >"$TMP/bad.txt"
check "--file with invalid UTF-8 and NUL" $PITH tokenize "$Q3" --file "$TMP/bad.txt"
expect_out "invalid byte reads as U+FFFD" "$($PITH tokenize "$Q3" "a�b")" $PITH tokenize "$Q3" "$(printf 'a\377b')"

# errors: one line, status 2
expect_fail2 "missing model" $PITH tokenize
expect_fail2 "missing text" $PITH tokenize "$Q3"
expect_fail2 "text and --file" $PITH tokenize "$Q3" hi --file "$C.txt"
expect_fail2 "unknown option" $PITH tokenize "$Q3" hi --bogus
expect_fail2 "missing --file value" $PITH tokenize "$Q3" --file
expect_fail2 "no such model" $PITH tokenize "$TMP/nope.gguf" hi
expect_fail2 "no such text file" $PITH tokenize "$Q3" --file "$TMP/nope.txt"
expect_fail2 "not a GGUF file" $PITH tokenize "$C.txt" hi

# The llama (SPM) tokenizer: llama.cpp's vector, and every stories260K case
# of cases.tsv whose prompt is a text: `pith tokenize` prints the ids
# without the BOS that prompt_ids start with.
SPM=$FIX/tokenizer/ggml-vocab-llama-spm.gguf
expect_out "SPM: ' Hello world' (space prefix kept)" "29871 15043 3186" $PITH tokenize "$SPM" " Hello world"
expect_out "SPM: <s> parsed, space prefix after it" "1 15043" $PITH tokenize "$SPM" "<s>Hello"
expect_out "SPM: byte fallback" "29871 243 162 169 156" $PITH tokenize "$SPM" "$(printf '\360\237\246\231')"
expect_out "SPM: read backend" "15043 3186" $PITH tokenize "$SPM" "Hello world" --no-mmap
n=0
# awk keeps the empty expected_ids column of the logits cases (sh's read
# would merge two tabs); the text is the prompt="..." note.
awk -F'\t' '$2 ~ /^stories260K/ && $6 ~ /prompt=text="/ { print $1 "\t" $2 "\t" $4 "\t" $6 }' "$FIX/cases.tsv" >"$TMP/stories.tsv"
while IFS='	' read -r id model prompt_ids notes; do
    text=$(printf '%s' "$notes" | sed -e 's/.*prompt=text="//' -e 's/",bos.*//' -e 's/";.*//')
    want=$(printf '%s' "$prompt_ids" | sed -e 's/^1,//' | tr ',' ' ')
    expect_out "stories $id: '$text' gives prompt_ids after BOS" "$want" $PITH tokenize "$FIX/models/$model" "$text"
    n=$((n + 1))
done <"$TMP/stories.tsv"
[ "$n" -eq 10 ] && ok "stories: 10 text prompts checked" || not_ok "stories: $n text prompts checked (want 10)"
expect_out "stories260K: --pieces keeps the space of the first piece" "403 ' Once'" $PITH tokenize "$FIX/models/stories260K.gguf" --pieces "Once"

# refused tokenizers: one line naming what is not supported
printf 'GGUF\003\000\000\000\000\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000\024\000\000\000\000\000\000\000tokenizer.ggml.model\010\000\000\000\004\000\000\000\000\000\000\000nope' >"$TMP/nope.gguf"
expect_fail2 "an unknown tokenizer model ('nope') is refused" $PITH tokenize "$TMP/nope.gguf" hi
if grep -q "tokenizer.ggml.model 'nope' is not supported" "$TMP/err"; then ok "the refusal names the tokenizer model"
else not_ok "refusal message: $(cat "$TMP/err")"; fi
finish

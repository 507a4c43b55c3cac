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
expect_fail2 "SPM vocab refused (not gpt2)" $PITH tokenize "$FIX/tokenizer/ggml-vocab-llama-spm.gguf" hi
if grep -q "tokenizer.ggml.model 'llama' is not supported" "$TMP/err"; then ok "SPM refusal names the tokenizer model"
else not_ok "SPM refusal message: $(cat "$TMP/err")"; fi
expect_fail2 "llama (SPM) model refused" $PITH tokenize "$FIX/models/stories260K.gguf" hi
finish

# Hostile inputs through the command line: model files edited to be wrong
# (tests/tools/main_ggufedit.c), a model truncated while pith runs, bad
# arguments, bad text, Ctrl-C in chat, closed stdout and context shifting.
# Each refusal is one line on stderr and exit status 2 (lib.sh's
# expect_fail2). Cases already covered elsewhere are not repeated here:
# malformed GGUF headers (test_gguf), missing/misshapen tensors and
# unsupported types at the API level (test_forward), -n -1, -c 0, an empty
# -p, --prompt-ids out of range, a prompt longer than the context and a
# closed stdout for `run -p` (t_run.sh).
. tests/lib.sh
EDIT=build/asan/tools/ggufedit
S=tests/fuzz/seeds/model/qwen3-f32.gguf   # 1 layer, 264 tokens, ChatML
M=$FIX/models/tiny-qwen3-f32.gguf

# ---- model files ------------------------------------------------------------
edited() { # NAME EDITS... -> $TMP/NAME.gguf from the small seed model
    name=$1; shift
    $EDIT "$S" "$TMP/$name.gguf" "$@" || not_ok "ggufedit $name"
}
edited arch --set-str general.architecture gpt2
expect_fail2 "model: unsupported architecture" $PITH run "$TMP/arch.gguf" -p hi -n 2
grep -q "architecture 'gpt2'" "$TMP/err" || not_ok "architecture message: $(cat "$TMP/err")"
edited notensor --drop-tensor blk.0.ffn_up.weight
expect_fail2 "model: a missing tensor" $PITH run "$TMP/notensor.gguf" -p hi -n 2
edited embd --set-u32 qwen3.embedding_length 16
expect_fail2 "model: tensors misshapen for the configuration" $PITH run "$TMP/embd.gguf" -p hi -n 2
edited heads --set-u32 qwen3.attention.head_count 4096
expect_fail2 "model: 4096 heads" $PITH run "$TMP/heads.gguf" -p hi -n 2
edited layers --set-u32 qwen3.block_count 4096
expect_fail2 "model: 4096 layers declared, 1 present" $PITH run "$TMP/layers.gguf" -p hi -n 2
edited ctxhuge --set-u32 qwen3.context_length 4000000000
expect_fail2 "model: context_length out of range" $PITH run "$TMP/ctxhuge.gguf" -p hi -n 2
# NaN/Inf weights: norms are checked when loading; a matrix's NaN or Inf
# is detected when the logits it produces are sampled.
edited nannorm --nan output_norm.weight
expect_fail2 "model: NaN norm weights detected at load" $PITH run "$TMP/nannorm.gguf" -p hi -n 2
edited nanq --nan blk.0.attn_q.weight
expect_fail2 "model: NaN matrix weights detected at the first token" $PITH run "$TMP/nanq.gguf" -p hi -n 2
grep -q "non-finite logit" "$TMP/err" || not_ok "NaN message: $(cat "$TMP/err")"
edited infup --inf blk.0.ffn_up.weight
expect_fail2 "model: an Inf matrix weight detected" $PITH run "$TMP/infup.gguf" -p hi -n 2
edited nanembd --nan token_embd.weight
expect_fail2 "model: NaN embeddings detected (chat)" sh -c "echo hi | $PITH chat $TMP/nanembd.gguf -n 2"
# Found by fuzz_model: a Q8_0 block whose scale is Inf (the x86 kernel's
# activation sums overflowed: undefined behaviour before the fix).
expect_fail2 "model: a Q8_0 block with an Inf scale (fuzz regression)" \
    $PITH run tests/fuzz/regress/model/q8_0-inf-scale-overflow.gguf -p hi -n 2
# Vocabulary and tensors that disagree.
# (the seed has 264 tokens: 256 bytes, 5 merges, 3 specials; dropping the
# specials keeps the merges valid)
edited vocab --shrink-array tokenizer.ggml.tokens 261 --shrink-array tokenizer.ggml.token_type 261 \
    --set-u32 tokenizer.ggml.bos_token_id 1 --set-u32 tokenizer.ggml.eos_token_id 2
expect_fail2 "model: vocabulary smaller than token_embd" $PITH run "$TMP/vocab.gguf" -p hi -n 2
grep -q "vocabulary has 261 tokens but token_embd.weight has 264 rows" "$TMP/err" || not_ok "vocab message: $(cat "$TMP/err")"
edited types --shrink-array tokenizer.ggml.token_type 100
expect_fail2 "model: token_type shorter than tokens" $PITH run "$TMP/types.gguf" -p hi -n 2
edited merges --shrink-array tokenizer.ggml.tokens 258 --shrink-array tokenizer.ggml.token_type 258
expect_fail2 "model: merges naming tokens that do not exist" $PITH run "$TMP/merges.gguf" -p hi -n 2
# Every dimension at its largest accepted value: the plan (about 2^60
# bytes) is refused before anything is mapped, with the numbers.
edited absurd --set-u32 qwen3.block_count 4096 --set-u32 qwen3.attention.head_count 4096 \
    --set-u32 qwen3.attention.head_count_kv 4096 --set-u32 qwen3.attention.key_length 1024 \
    --set-u32 qwen3.attention.value_length 1024 --set-u32 qwen3.context_length 16777216 \
    --set-u32 qwen3.feed_forward_length 1048576 --set-u32 qwen3.embedding_length 131072
expect_fail2 "model: absurd dimensions refused before mapping" $PITH run "$TMP/absurd.gguf" -p hi -c 16777216
grep -q "memory plan needs" "$TMP/err" || not_ok "absurd message: $(cat "$TMP/err")"
# A context that needs more memory than the machine has is refused before
# anything is mapped (4 layers x 16M positions x 256 x 2 x 2 bytes = 64 GiB).
$EDIT "$M" "$TMP/bigctx.gguf" --set-u32 qwen3.context_length 16777216 || not_ok "ggufedit bigctx"
expect_fail2 "-c larger than memory allows" $PITH run "$TMP/bigctx.gguf" -p hi -n 2 -c 16777216
grep -q "memory plan needs" "$TMP/err" || not_ok "memory message: $(cat "$TMP/err")"
# A plan the machine could hold but the system refuses (address space
# capped at 500 MiB; the release binary, as ASan needs terabytes of it).
expect_fail2 "-c: the arena mapping fails" prlimit --as=524288000 ./pith run "$TMP/bigctx.gguf" -p hi -n 1 -c 200000 -t 1
grep -q "cannot allocate the [0-9]*-byte arena" "$TMP/err" || not_ok "arena message: $(cat "$TMP/err")"
# A file truncated at start is caught by the reader in both backends.
head -c 100000 "$M" >"$TMP/short.gguf"
expect_fail2 "model: truncated file (mmap)" $PITH run "$TMP/short.gguf" -p hi -n 2
expect_fail2 "model: truncated file (read)" $PITH run "$TMP/short.gguf" -p hi -n 2 --no-mmap
expect_fail2 "model: a directory" $PITH run "$TMP" -p hi

# A mapped model truncated while pith runs: SIGBUS is caught and reported.
cp "$M" "$TMP/live.gguf"
mkfifo "$TMP/in"
$PITH chat "$TMP/live.gguf" -n 4 --temp 0 -t 1 <"$TMP/in" >"$TMP/live.out" 2>"$TMP/live.err" &
pid=$!
exec 3>"$TMP/in"
echo hello >&3
for i in $(seq 100); do grep -q 'turn 1' "$TMP/live.err" && break; sleep 0.1; done
truncate -s 4096 "$TMP/live.gguf"
echo again >&3
exec 3>&-
wait $pid; st=$?
if [ $st -eq 2 ] && [ "$(tail -1 "$TMP/live.err")" = "pith: $TMP/live.gguf: the model file changed or was truncated while in use" ]; then
    ok "model truncated while in use (mmap): one line, status 2"
else not_ok "truncated while in use: status $st: $(tail -3 "$TMP/live.err")"; fi
# With --no-mmap the weights were read at load time: truncation afterwards is harmless.
cp "$M" "$TMP/live2.gguf"
rm -f "$TMP/in"; mkfifo "$TMP/in"
$PITH chat "$TMP/live2.gguf" -n 4 --temp 0 -t 1 --no-mmap <"$TMP/in" >/dev/null 2>"$TMP/live2.err" &
pid=$!
exec 3>"$TMP/in"
echo hello >&3
for i in $(seq 100); do grep -q 'turn 1' "$TMP/live2.err" && break; sleep 0.1; done
truncate -s 4096 "$TMP/live2.gguf"
echo again >&3
exec 3>&-
wait $pid; st=$?
[ $st -eq 0 ] && grep -q 'turn 2' "$TMP/live2.err" && ok "model truncated while in use (--no-mmap): weights already read, chat goes on" \
    || not_ok "truncated with --no-mmap: status $st: $(tail -3 "$TMP/live2.err")"

# ---- arguments --------------------------------------------------------------
expect_fail2 "args: -c above the model's context" $PITH run "$M" -p hi -c 99999
expect_fail2 "args: -c negative" $PITH run "$M" -p hi -c -5
expect_fail2 "args: -c not a number" $PITH run "$M" -p hi -c 12x
expect_fail2 "args: -t 0" $PITH run "$M" -p hi -t 0
expect_fail2 "args: -b 0" $PITH run "$M" -p hi -b 0
expect_fail2 "args: -n beyond range" $PITH run "$M" -p hi -n 99999999999
expect_fail2 "args: --temp negative" $PITH run "$M" -p hi --temp -1
expect_fail2 "args: --temp nan" $PITH run "$M" -p hi --temp nan
expect_fail2 "args: --keep negative" $PITH run "$M" -p hi --keep -1
expect_fail2 "args: --keep as large as the context" $PITH run "$M" -p hi -c 64 --keep 64
expect_fail2 "args: missing value at the end" $PITH run "$M" -p hi -c
expect_fail2 "args: missing value of -p" $PITH run "$M" -p
expect_fail2 "args: unknown flag for chat" $PITH chat "$M" --bogus
expect_fail2 "args: unknown command" $PITH frobnicate
expect_fail2 "args: two models" $PITH run "$M" "$M" -p hi
expect_fail2 "args: -p and --prompt-ids" $PITH run "$M" -p hi --prompt-ids 1
expect_fail2 "args: --prompt-ids negative" $PITH run "$M" --prompt-ids -1
expect_fail2 "args: --prompt-ids empty item" $PITH run "$M" --prompt-ids 1,,2
expect_fail2 "args: --prompt-ids trailing comma" $PITH run "$M" --prompt-ids 1,2,
expect_fail2 "args: --prompt-ids huge" $PITH run "$M" --prompt-ids 99999999999999999999
expect_fail2 "args: --prompt-ids empty" $PITH run "$M" --prompt-ids ""
nl='
'
expect_fail2 "args: a newline inside an argument stays one line" $PITH run "$M" -p hi "--bo${nl}gus"
expect_fail2 "args: control bytes in a model name stay one line" $PITH run "$TMP/a$(printf '\033')b${nl}c.gguf" -p hi

# ---- text -------------------------------------------------------------------
check "text: invalid UTF-8 in -p" $PITH run "$M" -p "$(printf 'caf\351 \377\376 ok')" -n 4 --temp 0
check "text: invalid UTF-8 with --raw" $PITH run "$M" --raw -p "$(printf '\300\200\355\240\200')" -n 4 --temp 0
# NUL bytes cannot be in argv; through chat's stdin they are part of the message.
printf 'a\000b\n' | $PITH chat "$M" -n 2 --temp 0 -t 1 --ids-out "$TMP/nul.ids" >/dev/null 2>"$TMP/nul.err"; st=$?
printf 'ab\n' | $PITH chat "$M" -n 2 --temp 0 -t 1 --ids-out "$TMP/ab.ids" >/dev/null 2>&1
if [ $st -eq 0 ] && [ -s "$TMP/nul.ids" ] && [ "$(sed -n 1p "$TMP/nul.ids")" != "$(sed -n 1p "$TMP/ab.ids")" ]; then
    ok "text: a NUL byte in a chat message is kept, not a terminator"
else not_ok "NUL in chat: status $st: $(cat "$TMP/nul.err")"; fi
# A message longer than the context is ignored; the chat goes on.
long=$(yes 'word' | head -200 | tr '\n' ' ')
printf '%s\nhi\n' "$long" | $PITH chat "$M" -c 64 -n 2 --temp 0 -t 1 >/dev/null 2>"$TMP/long.err"; st=$?
[ $st -eq 0 ] && grep -q 'too long for the context' "$TMP/long.err" && grep -q 'turn 1' "$TMP/long.err" \
    && ok "text: a message longer than the context is refused, the chat goes on" || not_ok "long message: $st $(cat "$TMP/long.err")"
# A line longer than chat's 64 KiB message buffer.
head -c 70000 /dev/zero | tr '\0' 'x' >"$TMP/huge.txt"; echo >>"$TMP/huge.txt"; echo hi >>"$TMP/huge.txt"
$PITH chat "$M" -n 2 --temp 0 -t 1 <"$TMP/huge.txt" >/dev/null 2>"$TMP/huge.err"; st=$?
[ $st -eq 0 ] && grep -q 'longer than' "$TMP/huge.err" && grep -q 'turn 1' "$TMP/huge.err" \
    && ok "text: a line longer than 64 KiB is dropped, the chat goes on" || not_ok "huge line: $st $(cat "$TMP/huge.err")"
printf '\n\r\n\nhi\n' | $PITH chat "$M" -n 2 --temp 0 -t 1 >/dev/null 2>"$TMP/empty.err"
grep -q 'turn 1:' "$TMP/empty.err" && ! grep -q 'turn 2' "$TMP/empty.err" && ok "text: empty chat lines are skipped" \
    || not_ok "empty lines: $(cat "$TMP/empty.err")"

# ---- streams and signals ----------------------------------------------------
# Closed stdout during a long generation: quiet, status 0.
( $PITH run "$M" -p hi -n 100000 --ignore-eos -c 128 --temp 1 --seed 1 2>"$TMP/pipe.err"; echo $? >"$TMP/pipe.st" ) | head -c 10 >/dev/null
[ "$(cat "$TMP/pipe.st")" = 0 ] && ! grep -qv -e '^load:' -e '^prompt:' -e '^generation:' -e '^\[context full' "$TMP/pipe.err" \
    && ok "closed stdout during run ends quietly (status 0)" || not_ok "closed stdout: $(cat "$TMP/pipe.st") $(head -c 300 "$TMP/pipe.err")"
( printf 'hi\nhi\n' | $PITH chat "$M" -n 100000 --ignore-eos -c 128 --temp 1 --seed 1 2>"$TMP/pipe2.err"; echo $? >"$TMP/pipe2.st" ) | head -c 10 >/dev/null
[ "$(cat "$TMP/pipe2.st")" = 0 ] && ! grep -q '^pith:' "$TMP/pipe2.err" && ok "closed stdout during chat ends quietly (status 0)" \
    || not_ok "closed stdout chat: $(cat "$TMP/pipe2.st") $(head -c 300 "$TMP/pipe2.err")"

# Ctrl-C: stops the reply and returns to the prompt; at the prompt it exits.
rm -f "$TMP/in"; mkfifo "$TMP/in"
$PITH chat "$M" -n 1000000 --ignore-eos -c 128 --temp 1 --seed 3 -t 1 --ids-out "$TMP/int.ids" \
    <"$TMP/in" >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
exec 3>"$TMP/in"
echo hello >&3
for i in $(seq 100); do [ -s "$TMP/int.out" ] && break; sleep 0.1; done
sleep 0.3
kill -INT $pid
for i in $(seq 100); do grep -q 'turn 1' "$TMP/int.err" && break; sleep 0.1; done
if kill -0 $pid 2>/dev/null && grep -q 'interrupted' "$TMP/int.err" && grep -q 'turn 1' "$TMP/int.err"; then
    ok "Ctrl-C during a reply stops it; chat is still running"
else not_ok "Ctrl-C during a reply: $(cat "$TMP/int.err")"; fi
echo "again" >&3
for i in $(seq 100); do [ "$(grep -c '^prefill' "$TMP/int.ids")" -ge 2 ] && break; sleep 0.1; done
sleep 0.3
kill -INT $pid
for i in $(seq 100); do grep -q 'turn 2' "$TMP/int.err" && break; sleep 0.1; done
p2=$(sed -n 3p "$TMP/int.ids" | cut -d: -f2)
case "$p2" in 263,198,*) ok "Ctrl-C: the next turn closes the interrupted reply (<|im_end|>, newline)" ;;
    2002,198,*) ok "Ctrl-C: the next turn closes the interrupted reply (<|im_end|>, newline)" ;;
    *) not_ok "Ctrl-C: second turn prefill $p2" ;; esac
kill -INT $pid   # idle at the prompt: exits
wait $pid; st=$?
exec 3>&-
[ $st -eq 130 ] && ok "Ctrl-C at the prompt exits (status 130)" || not_ok "Ctrl-C at the prompt: status $st"

# ---- context shift ------------------------------------------------------------
ids=$($PITH run "$M" -p hi -n 300 -c 64 --ignore-eos --temp 1 --seed 5 --print-ids 2>"$TMP/shift.err")
n=$(echo "$ids" | tr ',' '\n' | grep -c .)
[ "$n" -eq 300 ] && grep -q 'context full: dropped' "$TMP/shift.err" && ok "run: 300 tokens in a context of 64 (shifting)" \
    || not_ok "run with shift: $n ids, $(tail -3 "$TMP/shift.err")"
ids=$($PITH run "$M" -p hi -n 300 -c 64 --ignore-eos --temp 1 --seed 5 --print-ids --no-shift 2>"$TMP/noshift.err")
n=$(echo "$ids" | tr ',' '\n' | grep -c .)
[ "$n" -lt 64 ] && grep -q 'context full (64 tokens): stopping' "$TMP/noshift.err" && ok "run --no-shift stops at a full context" \
    || not_ok "run --no-shift: $n ids, $(tail -3 "$TMP/noshift.err")"
$PITH run "$M" -p hi -n 200 -c 64 --keep 10 --ignore-eos --temp 0 --kv-type f32 --print-ids >/dev/null 2>"$TMP/keep.err"
grep -q 'dropped 27 tokens after the first 10' "$TMP/keep.err" && ok "run --keep 10: the first shift drops half of the other 54" \
    || not_ok "--keep: $(grep context "$TMP/keep.err" | head -2)"
# Shifting vs re-prefilling, end to end on a one-layer model (where they
# must agree, see tests/test_context_shift.c): the first token after a
# shift equals a fresh run over the retained ids.
ids=$($PITH run "$S" --prompt-ids 5,6,7,8 -n 61 -c 64 --keep 4 --ignore-eos --temp 0 --kv-type f32 --print-ids 2>"$TMP/s1.err")
# 4 prompt + 60 fed = 64: the 61st token is sampled from the full cache, before any shift; -n 62 shifts once.
ids2=$($PITH run "$S" --prompt-ids 5,6,7,8 -n 62 -c 64 --keep 4 --ignore-eos --temp 0 --kv-type f32 --print-ids 2>"$TMP/s2.err")
grep -q 'dropped 30 tokens after the first 4, 34 left' "$TMP/s2.err" || not_ok "shift amount: $(cat "$TMP/s2.err")"
kept=$(echo "5,6,7,8,$ids" | cut -d, -f1-4,35-65)
fresh=$($PITH run "$S" --prompt-ids "$kept" -n 1 -c 64 --ignore-eos --temp 0 --kv-type f32 --print-ids 2>/dev/null)
last=$(echo "$ids2" | tr ',' '\n' | tail -1)
[ -n "$fresh" ] && [ "$fresh" = "$last" ] && ok "run: the token after a shift equals a fresh run of the kept ids (1 layer)" \
    || not_ok "shift vs fresh: $last vs $fresh"
finish

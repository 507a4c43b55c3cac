# pith run and pith chat on the tiny fixture models: the command line a user
# drives, the greedy ids a fresh run gives, and the chat KV-cache reuse.
. tests/lib.sh
M=$FIX/models/tiny-qwen3-f32.gguf

# Greedy ids through `run --print-ids` equal the fixture's expected ids for
# the steps whose reference gap is above the F32 threshold (all of them here).
line=$(grep -P '^pub_tq3_f32_greedy_once\t' "$FIX/cases.tsv")
prompt=$(echo "$line" | cut -f4); expected=$(echo "$line" | cut -f5)
prefix=$(echo "$line" | cut -f6 | tr ';' '\n' | sed -n 's/^exact_prefix=//p')
got=$($PITH run "$M" --prompt-ids "$prompt" -n 32 --temp 0 --kv-type f32 -t 1 --print-ids 2>"$TMP/err")
want=$(echo "$expected" | cut -d, -f1-"$prefix"); gotp=$(echo "$got" | cut -d, -f1-"$prefix")
if [ "$gotp" = "$want" ] && [ "$prefix" -ge 1 ]; then ok "run --print-ids: first $prefix greedy ids equal llama.cpp's"
else not_ok "run --print-ids greedy: got $got want $expected (prefix $prefix)"; fi
# --print-ids prints exactly one line on stdout.
[ "$(echo "$got" | wc -l)" -eq 1 ] && ok "run --print-ids prints one stdout line" || not_ok "run --print-ids prints one line"

# Text prompt through the chat template; stats go to stderr, text to stdout.
check "run -p streams text" $PITH run "$M" -p "Hello there" -n 8 --temp 0 -t 1
grep -q '^generation: ' "$TMP/err" && ok "run prints generation speed on stderr" || not_ok "run stats on stderr"
check "run --raw" $PITH run "$M" -p "Hello there" -n 4 --raw --temp 0.8 --seed 7
check "run with sampling options" $PITH run "$M" -p "Hi" -n 4 --temp 0.7 --top-k 5 --top-p 0.9 --min-p 0.05 --repeat-penalty 1.1 --seed 3
a=$($PITH run "$M" -p "Hi" -n 12 --temp 1 --seed 42 --print-ids 2>/dev/null)
b=$($PITH run "$M" -p "Hi" -n 12 --temp 1 --seed 42 --print-ids 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "same --seed, same tokens" || not_ok "seeded runs differ: $a / $b"
check "run --no-mmap" $PITH run "$M" -p "Hi" -n 4 --temp 0 --no-mmap
$PITH run "$M" -p "Hi" -n 4 --temp 0 --trace "$TMP/trace.jsonl" >/dev/null 2>&1
if [ "$(wc -l <"$TMP/trace.jsonl")" -eq 4 ] && grep -q '"top":\[' "$TMP/trace.jsonl"; then ok "--trace writes one JSON line per token"
else not_ok "--trace: $(head -c 200 "$TMP/trace.jsonl")"; fi
check "run --plan" $PITH run "$M" -p "Hi" --plan
grep -qi 'kv cache' "$TMP/out" && ok "--plan shows the KV cache" || not_ok "--plan output: $(head -c 300 "$TMP/out")"

# -f FILE and --system-file FILE (llama-cli's -f: one final newline
# dropped) give exactly the ids of the same text given as -p and --system
printf 'Tell me a story about a cat.\n' >"$TMP/prompt.txt"; printf 'You are terse.\n' >"$TMP/system.txt"
a=$($PITH run "$M" -f "$TMP/prompt.txt" --system-file "$TMP/system.txt" -n 8 --temp 0 -t 1 --print-ids 2>"$TMP/err")
b=$($PITH run "$M" -p "Tell me a story about a cat." --system "You are terse." -n 8 --temp 0 -t 1 --print-ids 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "run -f FILE --system-file FILE: the ids of -p and --system" \
    || not_ok "run -f: $a vs -p: $b $(head -c 200 "$TMP/err")"
printf 'Tell me a story about a cat.\n' | $PITH chat "$M" -n 8 --temp 0 -t 1 --system-file "$TMP/system.txt" \
    --ids-out "$TMP/ids-f" >/dev/null 2>"$TMP/err"
printf 'Tell me a story about a cat.\n' | $PITH chat "$M" -n 8 --temp 0 -t 1 --system "You are terse." \
    --ids-out "$TMP/ids-s" >/dev/null 2>&1
[ -s "$TMP/ids-f" ] && cmp -s "$TMP/ids-f" "$TMP/ids-s" && ok "chat --system-file FILE: the ids of --system" \
    || not_ok "chat --system-file: $(head -c 200 "$TMP/err")"
: >"$TMP/empty.txt"; printf 'a\000b' >"$TMP/nul.txt"
expect_fail2 "run -f of an empty file: one line" $PITH run "$M" -f "$TMP/empty.txt"
expect_fail2 "run -f of a missing file: one line" $PITH run "$M" -f "$TMP/missing.txt"
expect_fail2 "run -f of a file with a NUL byte: one line" $PITH run "$M" -f "$TMP/nul.txt"
expect_fail2 "run -f with -p: one line" $PITH run "$M" -f "$TMP/prompt.txt" -p hi
expect_fail2 "run --system with --system-file: one line" $PITH run "$M" -p hi --system x --system-file "$TMP/system.txt"
# Closed stdout: quiet exit.
$PITH run "$M" -p "Hello" -n 64 --temp 0 2>"$TMP/err2" | head -c 3 >/dev/null
[ ! -s "$TMP/err2" ] || grep -q '^load: ' "$TMP/err2" && ok "closed stdout ends quietly" || not_ok "closed stdout: $(head -c 200 "$TMP/err2")"

expect_fail2 "run without prompt" $PITH run "$M"
expect_fail2 "run empty prompt" $PITH run "$M" -p ""
expect_fail2 "run unknown flag" $PITH run "$M" -p x --bogus
expect_fail2 "run -n negative" $PITH run "$M" -p x -n -1
expect_fail2 "run -c zero" $PITH run "$M" -p x -c 0
expect_fail2 "run --top-p 2" $PITH run "$M" -p x --top-p 2
expect_fail2 "run --prompt-ids out of range" $PITH run "$M" --prompt-ids 1,99999
expect_fail2 "run prompt longer than the context" $PITH run "$M" --prompt-ids 1,2,3,4,5,6,7,8,9,10 -c 8
expect_fail2 "run missing model file" $PITH run "$TMP/nope.gguf" -p x
expect_fail2 "run --kv-type bad" $PITH run "$M" -p x --kv-type q3

# --template NAME overrides the model's template; an unknown name is refused.
check "run --template zephyr" $PITH run "$M" -p "Hi" -n 2 --temp 0 --template zephyr
expect_fail2 "run --template unknown" $PITH run "$M" -p "Hi" --template nosuch

# A llama SPM model given text: BOS is added once, as the model asks, and the
# greedy continuation equals llama.cpp's for the text prompt of the fixture.
S=$FIX/models/stories260K.gguf
line=$(grep -P '^pub_stories_greedy_once\t' "$FIX/cases.tsv")
expected=$(echo "$line" | cut -f5)
prefix=$(echo "$line" | cut -f6 | tr ';' '\n' | sed -n 's/^exact_prefix=//p')
got=$($PITH run "$S" --raw -p "Once upon a time" -n 32 --temp 0 --kv-type f32 -t 1 --print-ids 2>"$TMP/err")
if [ "$(echo "$got" | cut -d, -f1-"$prefix")" = "$(echo "$expected" | cut -d, -f1-"$prefix")" ]; then
    ok "run --raw on stories260K: one BOS, first $prefix greedy ids equal llama.cpp's"
else not_ok "stories260K greedy from text: got $got want $expected"; fi

# Chat: two turns from a pipe. The second turn prefills only its new tokens,
# and its greedy reply equals a fresh run over the whole token history.
printf 'Hello there\nHow are you?\n' | $PITH chat "$M" -n 12 --temp 0 -t 1 --kv-type f32 --ids-out "$TMP/ids" \
    >"$TMP/chat.out" 2>"$TMP/chat.err"
if [ $? -eq 0 ] && [ "$(wc -l <"$TMP/ids")" -eq 4 ]; then ok "chat: two turns from a pipe"
else not_ok "chat two turns: $(head -c 300 "$TMP/chat.err")"; fi
p1=$(sed -n 1p "$TMP/ids" | cut -d: -f2); r1=$(sed -n 2p "$TMP/ids" | cut -d: -f2)
p2=$(sed -n 3p "$TMP/ids" | cut -d: -f2); r2=$(sed -n 4p "$TMP/ids" | cut -d: -f2)
n1=$(echo "$p1,$r1" | tr ',' '\n' | wc -l); n2=$(echo "$p2" | tr ',' '\n' | wc -l)
if grep -q "turn 2: prefilled $n2 new tokens" "$TMP/chat.err" && [ "$n2" -lt 30 ] && \
   grep -q "$((n1 + n2 + 12)) in context" "$TMP/chat.err"; then
    ok "chat: turn 2 prefilled only its $n2 new tokens on top of $n1 cached"
else not_ok "chat prefill counts: $(cat "$TMP/chat.err")"; fi
case "$p2" in 2002,198,2001,*) ok "chat: turn 2 closes the reply and opens a user turn" ;;
    *) not_ok "chat turn 2 starts with $p2" ;; esac
fresh=$($PITH run "$M" --prompt-ids "$p1,$r1,$p2" -n 12 --temp 0 -t 1 --kv-type f32 --print-ids 2>/dev/null)
[ -n "$r2" ] && [ "$fresh" = "$r2" ] && ok "chat: turn 2 reply equals a fresh run of the whole history" \
    || not_ok "chat reply $r2 vs fresh run $fresh"
printf 'Hi\n/no_think\nHi again\n/reset\nHi\n' | $PITH chat "$M" -n 4 --temp 0 -t 1 --ids-out "$TMP/ids2" \
    >/dev/null 2>"$TMP/chat2.err"
if grep -q 'thinking off' "$TMP/chat2.err" && grep -q 'conversation reset' "$TMP/chat2.err" && \
   [ -n "$(sed -n 1p "$TMP/ids2")" ] && [ "$(sed -n 5p "$TMP/ids2")" = "$(sed -n 1p "$TMP/ids2")" ]; then
    ok "chat: /no_think, /reset (first turn after reset equals the first turn)"
else not_ok "chat commands: $(cat "$TMP/chat2.err")"; fi

# Templates: --template raw is a choice (no warning); a model without a
# template gets a note that does not name a template 'none'.
check "--template raw" $PITH run "$M" -p hi -n 2 --temp 0 --template raw
grep -q 'not recognised' "$TMP/err" && not_ok "--template raw warns: $(cat "$TMP/err")" || ok "--template raw: no warning"
check "run, no template" $PITH run "$S" -p "Once upon a time" -n 4 --temp 0
if grep -q 'has no chat template' "$TMP/err" && ! grep -q "'none'" "$TMP/err"; then ok "no template: a note, no 'none'"
else not_ok "no template: $(head -3 "$TMP/err")"; fi
# A raw prompt is echoed first on a terminal (script gives a pty), with
# --echo anywhere, never with --no-echo or in a pipe by default.
check "--echo" $PITH run "$S" -p "Once upon a time" -n 4 --temp 0 --echo
head -c 16 "$TMP/out" | grep -qx "Once upon a time" && ok "--echo prints the prompt first" || not_ok "--echo: $(head -c 80 "$TMP/out")"
check "pipe: no echo" $PITH run "$S" -p "Once upon a time" -n 4 --temp 0
grep -q "^Once upon a time" "$TMP/out" && not_ok "echo in a pipe: $(head -c 80 "$TMP/out")" || ok "no echo into a pipe"
if command -v script >/dev/null 2>&1; then
    script -qec "$PITH run $S -p 'Once upon a time' -n 4 --temp 0 2>/dev/null" /dev/null >"$TMP/tty" </dev/null
    grep -q "^Once upon a time" "$TMP/tty" && ok "a terminal gets the prompt first" || not_ok "tty echo: $(head -c 80 "$TMP/tty")"
    script -qec "$PITH run $S -p 'Once upon a time' -n 4 --temp 0 --no-echo 2>/dev/null" /dev/null >"$TMP/tty" </dev/null
    grep -q "^Once upon a time" "$TMP/tty" && not_ok "--no-echo on a terminal echoed" || ok "--no-echo on a terminal"
else not_ok "script (util-linux) is missing: the terminal echo is untested"; fi
# Progress on a terminal (PITH_PROGRESS_DELAY=0: from the first step, the
# fixtures load too fast for the default half second): loading in read
# mode in MiB and MB/s, the prompt in tokens; nothing of it into a pipe.
long=$(i=0; while [ $i -lt 40 ]; do printf 'Once upon a time '; i=$((i + 1)); done)
if command -v script >/dev/null 2>&1; then
    PITH_PROGRESS_DELAY=0 script -qec "$PITH run $S --load read -b 16 -p '$long' -n 2 --temp 0 >/dev/null" /dev/null \
        >"$TMP/tty" </dev/null
    if grep -q 'loading: [0-9.]* of [0-9.]* MiB, [0-9.]* MB/s' "$TMP/tty" && grep -q 'prompt: [0-9]* of [0-9]* tokens' "$TMP/tty"
    then ok "progress on a terminal: loading MiB and MB/s, prompt tokens"
    else not_ok "progress on a terminal: $(tr '\r' '|' <"$TMP/tty" | head -c 300)"; fi
fi
PITH_PROGRESS_DELAY=0 $PITH run "$S" --load read -b 16 -p "$long" -n 2 --temp 0 >/dev/null 2>"$TMP/err"
grep -q 'loading:\|prompt: [0-9]* of' "$TMP/err" && not_ok "progress into a pipe: $(head -c 200 "$TMP/err")" || ok "no progress into a pipe"
check "--stream-window on run" $PITH run "$M" -p hi -n 2 --temp 0 --load stream --stream-window 8M
finish

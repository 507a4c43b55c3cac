#!/bin/sh
# t_memory.sh - the memory planner (--mem, --load, --plan).
# (a) Decisions at their thresholds, with budgets taken from the model's own
#     --plan numbers: mmap when it fits (to the byte), else stream; the
#     largest context that fits (and not one more); the floor; one-line
#     refusal (exit 2) below it; --load and --no-mmap; logits and bench.
# (b) Under a real memory cap below the model's file size (a memory cgroup
#     made here; `prlimit --as` where cgroup v1 is not writable), a random
#     ~80 MB Q8_0 model streams: the same greedy ids as an uncapped mapped
#     run, and the peak RSS pith reports (VmHWM) stays within --mem. (b)
#     runs the release binary ./pith, as t_soak.sh does: ASan's shadow and
#     quarantine would measure the sanitizer, not pith.
. tests/lib.sh
M=$FIX/models/tiny-qwen3-f32.gguf
IDS=1925,346,705,263,264,882
# Every run of (a) has the same arguments but --mem/--load/--no-mmap/-c, so
# the plans that --plan shows are the plans of the runs.
A="--prompt-ids $IDS -n 8 --temp 0 -t 1 --print-ids"

# need MODE CTX: resident bytes from the "needs --load MODE, context CTX" row of $TMP/plan
need() { sed -n "s/^  needs --load $1, context $2  *\([0-9][0-9]*\) bytes.*/\1/p" "$TMP/plan"; }
# decision: the "decision:" line of $TMP/plan
decision() { sed -n 's/^decision: //p' "$TMP/plan"; }
plan() { "$@" --plan >"$TMP/plan" 2>"$TMP/plan.err"; }
# loadline: the mode and context of the last run's "load:" line in $TMP/err
loadline() { sed -n 's/^load: .*(--load \([a-z]*\)), context \([0-9]*\), .*/\1 \2/p' "$TMP/err"; }

# ---- (a) decisions ---------------------------------------------------------
plan $PITH run "$M" $A -c 1024
st=$?
mm=$(need mmap 1024); rd=$(need read 1024); sm=$(need stream 1024); fl=$(need stream 64)
if [ $st -eq 0 ] && [ -n "$mm" ] && [ -n "$rd" ] && [ -n "$sm" ] && [ -n "$fl" ] && [ "$sm" -lt "$mm" ] && [ "$fl" -lt "$sm" ]; then
    ok "--plan: needs mmap $mm, read $rd, stream $sm bytes at 1024, stream $fl at 64"
else not_ok "--plan numbers (status $st): $(head -c 400 "$TMP/plan") $(cat "$TMP/plan.err")"; fi
grep -q '^  budget .*of the .* MiB of RAM' "$TMP/plan" && ok "--plan: the default budget is a share of the RAM, and says so" \
    || not_ok "--plan budget line: $(grep budget "$TMP/plan")"
for row in "kv cache" "arena (one mapping" "model file, memory-mapped" "binary, libc, stacks" "total resident" "budget"; do
    grep -q "^  $row" "$TMP/plan" || not_ok "--plan has no '$row' row"
done
t=$(sed -n 's/^  total resident  *\([0-9]*\) bytes.*/\1/p' "$TMP/plan")
[ "$t" = "$mm" ] && ok "--plan: total resident = what mmap needs ($t)" || not_ok "--plan total $t vs mmap $mm"

# decide MEM WANT NAME [ARGS]: --plan with --mem MEM decides WANT (a pattern)
decide() {
    mem=$1; want=$2; name=$3; shift 3
    plan $PITH run "$M" $A -c 1024 --mem "$mem" "$@"
    got=$(decision)
    case "$got" in $want|$want,*|$want\ *) ok "$name: $got" ;; *) not_ok "$name: decided '$got', want '$want' ($(cat "$TMP/plan.err"))" ;; esac
}
decide "$mm" "--load mmap, context 1024" "budget = mmap's need: mapped"
decide $((mm - 1)) "--load stream, context 1024" "one byte less: streamed"
decide "$sm" "--load stream, context 1024" "budget = stream's need: streamed, full context"
decide $((sm - 1)) "--load stream, context * (shrunk to fit)" "one byte less than stream: the context shrinks"
shrunk=$(decision | sed -n 's/^--load stream, context \([0-9]*\).*/\1/p')
if [ -n "$shrunk" ] && [ "$shrunk" -ge 64 ] && [ "$shrunk" -lt 1024 ]; then
    plan $PITH run "$M" $A -c "$shrunk" --mem $((sm - 1)); at=$(need stream "$shrunk")
    plan $PITH run "$M" $A -c $((shrunk + 1)) --mem $((sm - 1)); above=$(need stream $((shrunk + 1)))
    if [ "$at" -le $((sm - 1)) ] && [ "$above" -gt $((sm - 1)) ]; then
        ok "shrunk to $shrunk: the largest context that fits ($at <= $((sm - 1)) < $above)"
    else not_ok "shrunk to $shrunk: $at at it, $above one above, budget $((sm - 1))"; fi
else not_ok "shrunk context '$shrunk' out of [64, 1024)"; fi
decide "$fl" "--load stream, context 64 (shrunk to fit)" "budget = the floor's need: context 64"
plan $PITH run "$M" $A -c 1024 --mem $((fl - 1))
st=$?
[ $st -eq 2 ] && grep -q '^decision: nothing fits' "$TMP/plan" && [ "$(wc -l <"$TMP/plan.err")" -eq 1 ] \
    && ok "--plan below the floor: the table, then one line and exit 2" || not_ok "--plan below the floor: status $st"

# Real runs at the thresholds: what the run says it did, and its notes.
expect_fail2 "refusal below the floor: one line, exit 2" $PITH run "$M" $A -c 1024 --mem $((fl - 1))
grep -q "does not fit the memory budget of .* MiB (--mem): the least it needs is .* MiB, with --load stream and a context of 64 (arena .*; binary, libc and stacks" "$TMP/err" \
    && ok "refusal names the budget, the least need and its parts" || not_ok "refusal: $(cat "$TMP/err")"
$PITH run "$M" $A -c 1024 --mem "$mm" >"$TMP/out" 2>"$TMP/err"
[ "$(loadline)" = "mmap 1024" ] && [ "$(grep -c '^note:' "$TMP/err")" -eq 0 ] && ok "run at mmap's need maps, no note" \
    || not_ok "run at mmap's need: $(loadline) $(head -3 "$TMP/err")"
$PITH run "$M" $A -c 1024 --mem $((sm - 1)) >"$TMP/out" 2>"$TMP/err"
if [ "$(loadline)" = "stream $shrunk" ] && [ "$(grep -c '^note: .*streaming the weights; context shrunk from 1024 to '"$shrunk"' positions' "$TMP/err")" -eq 1 ]
then ok "run below stream's need: streamed, context $shrunk, one note line"
else not_ok "run below stream's need: $(loadline): $(head -3 "$TMP/err")"; fi
$PITH run "$M" $A -c 1024 --mem "$fl" >"$TMP/out" 2>"$TMP/err"
[ "$(loadline)" = "stream 64" ] && ok "run at the floor's need: context 64" || not_ok "run at the floor: $(loadline) $(head -3 "$TMP/err")"
grep -q '^load: .*; planned [0-9.]* MiB resident, budget [0-9.]* MiB (--mem)$' "$TMP/err" &&
    grep -q '^generation: .*; peak RSS [0-9.]* MiB (VmHWM [0-9]* bytes)$' "$TMP/err" \
    && ok "run reports the plan, the budget and its peak RSS" || not_ok "run stats: $(grep -e '^load:' -e '^generation:' "$TMP/err")"

# The prompt sets the floor: 6 ids + 1 to generate is below 64; 100 ids are not.
long=$(seq -s, 1 100)
plan $PITH run "$M" --prompt-ids "$long" -c 1024
lf=$(need stream 101)
plan $PITH run "$M" --prompt-ids "$long" -c 1024 --mem "$lf"
case "$(decision)" in "--load stream, context 101"*) ok "the floor is the prompt (100 ids + 1) when longer than 64" ;;
    *) not_ok "prompt floor: $(decision) $(cat "$TMP/plan.err")" ;; esac

# --load and --no-mmap
decide "$mm" "--load read, context 1024" "--no-mmap: read when it fits" --no-mmap
decide $((rd - 1)) "--load stream, context 1024" "--no-mmap: stream when read does not fit" --no-mmap
decide 100G "--load stream, context 1024" "--load stream is obeyed when everything fits" --load stream
decide 100G "--load read, context 1024" "--load read is obeyed" --load read
decide $((mm - 1)) "--load mmap, context * (shrunk to fit)" "--load mmap over budget: the context shrinks, the mode stays" --load mmap
expect_fail2 "--load mmap that cannot fit: refused" $PITH run "$M" $A --load mmap --mem 20M
grep -q 'with --load mmap and a context of 64 (model file ' "$TMP/err" && ok "--load mmap refusal counts the mapped file" \
    || not_ok "--load mmap refusal: $(cat "$TMP/err")"
expect_fail2 "--load mmap with --no-mmap" $PITH run "$M" -p hi --load mmap --no-mmap
expect_fail2 "--load bogus" $PITH run "$M" -p hi --load bogus
expect_fail2 "--mem abc" $PITH run "$M" -p hi --mem abc
expect_fail2 "--mem 0" $PITH run "$M" -p hi --mem 0
expect_fail2 "--mem 12X" $PITH run "$M" -p hi --mem 12X
decide 1G "--load mmap, context 1024" "--mem with a G suffix"

# The same tokens whatever the planner chose.
$PITH run "$M" $A -c 1024 >"$TMP/ids.mmap" 2>"$TMP/err"
for how in "--load read" "--load stream" "--mem $((sm - 1))" "--mem $fl"; do
    $PITH run "$M" $A -c 1024 $how >"$TMP/ids.other" 2>"$TMP/err"
    if [ -s "$TMP/ids.mmap" ] && cmp -s "$TMP/ids.mmap" "$TMP/ids.other"; then ok "greedy ids with $how = mapped"
    else not_ok "greedy ids with $how: $(cat "$TMP/ids.other") vs $(cat "$TMP/ids.mmap") $(head -2 "$TMP/err")"; fi
done

# chat, logits and bench take --mem too.
echo "hello" | $PITH chat "$M" -n 4 --mem $((fl - 1)) >"$TMP/out" 2>"$TMP/err"; st=$?
[ $st -eq 2 ] && grep -q '^pith: .*does not fit the memory budget' "$TMP/err" && ok "chat refuses below the floor" \
    || not_ok "chat --mem: status $st $(head -2 "$TMP/err")"
plan $PITH logits "$M" --prompt-ids $IDS --out "$TMP/l0.f32"
lmm=$(need mmap 6)
check "logits --mem (stream)" $PITH logits "$M" --prompt-ids $IDS --out "$TMP/l1.f32" --mem $((lmm - 1)) --plan
grep -q '^decision: --load stream, context 6\(, stream window [0-9]* bytes .*\)\{0,1\}$' "$TMP/out" && ok "logits streams in a small budget, context = the ids" \
    || not_ok "logits decision: $(grep decision "$TMP/out")"
check "logits mapped" $PITH logits "$M" --prompt-ids $IDS --out "$TMP/l2.f32"
cmp -s "$TMP/l1.f32" "$TMP/l2.f32" && ok "logits streamed = logits mapped, bit for bit" || not_ok "logits differ between load modes"
plan $PITH logits "$M" --prompt-ids $IDS --out "$TMP/l3.f32" -c 1024
lfl=$(need stream 6)
expect_fail2 "logits never shrinks below its ids" $PITH logits "$M" --prompt-ids $IDS --out "$TMP/l3.f32" -c 1024 --mem $((lfl - 1))
plan $PITH bench "$M" -p 8 -n 4 -r 1
bmm=$(need mmap 8)
[ -n "$bmm" ] && grep -q '^decision: --load mmap, context 8$' "$TMP/plan" && ok "bench --plan: the table" || not_ok "bench --plan: $(head -c 300 "$TMP/plan")"
check "bench --mem" $PITH bench "$M" -p 8 -n 4 -r 1 --mem $((bmm - 1))
grep -q -- '--load stream' "$TMP/out" && grep -q '^peak RSS: [0-9.]* MiB' "$TMP/out" && ok "bench streams and reports its peak RSS" \
    || not_ok "bench --mem: $(head -4 "$TMP/out")"
expect_fail2 "bench --mem too small" $PITH bench "$M" -p 8 -n 4 -r 1 --mem 1M

# ---- (b) a real memory cap below the file size -----------------------------
P=./pith
# the model is data: the release mkmodel writes the same bytes, faster
MK=${MK_REL:-build/rel/tools/mkmodel}
BIG=$TMP/big.gguf
[ -x "$P" ] || not_ok "./pith is not built (make pith)"
$MK "$BIG" --layers 6 --embd 1024 --ff 3072 --heads 16 --kv-heads 8 --head-dim 64 --vocab 4096 --ctx 2048 \
    --type q8_0 --seed 5 >/dev/null 2>"$TMP/mk.err" || not_ok "mkmodel: $(cat "$TMP/mk.err")"
size=$(stat -c %s "$BIG")
# Out of the page cache: a cgroup is charged only for pages it brings in.
nocache() { dd if="$BIG" iflag=nocache count=0 2>/dev/null; }
PROMPT=$(seq -s, 10 40)
# 31 prompt ids and 40 generated in a context of 64: the KV cache fills
# (every planned page is touched) and shifts once.
ARGS="--prompt-ids $PROMPT -c 64 -n 40 --ignore-eos --temp 0 -t 2 --print-ids"
$P run "$BIG" $ARGS --load mmap >"$TMP/big.mmap" 2>"$TMP/big.err" || not_ok "uncapped run: $(cat "$TMP/big.err")"
$P run "$BIG" $ARGS --plan --load stream >"$TMP/plan" 2>"$TMP/plan.err"
need_s=$(need stream 64)
# The budget: what streaming needs, rounded up to a MiB, plus 2 MiB.
budget=$(( (need_s + 1048575) / 1048576 * 1048576 + 2097152 ))
if [ -n "$need_s" ] && [ "$budget" -lt $((size * 2 / 3)) ]; then
    ok "budget $budget bytes: well below the model's $size bytes"
else not_ok "budget '$budget' (stream needs '$need_s') is not well below the file size $size"; fi

# capped NAME ARGS...: `pith run BIG ARGS --mem $budget` under a cap of
# $budget bytes (a memory cgroup made for it, removed after), or, when no
# cgroup v1 memory controller is writable (or PITH_TEST_NO_CGROUP is set),
# under an address-space cap below the file size, so that mapping the
# model cannot even be tried. Output in $TMP/NAME.cap, stderr in NAME.err.
capped() {
    name=$1; shift
    nocache
    CG=/sys/fs/cgroup/memory/pith-test-$$
    if [ -z "$PITH_TEST_NO_CGROUP" ] && mkdir "$CG" 2>/dev/null && echo "$budget" >"$CG/memory.limit_in_bytes" 2>/dev/null; then
        how="cgroup v1 memory.limit_in_bytes=$budget"
        # A subshell moves itself into the group, then becomes pith.
        sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" $P run "$BIG" "$@" --mem "$budget" >"$TMP/$name.cap" 2>"$TMP/$name.err"
        st=$?
        cg_peak=$(cat "$CG/memory.max_usage_in_bytes" 2>/dev/null)
        rmdir "$CG" 2>/dev/null || not_ok "cgroup $CG could not be removed"
        [ -n "$cg_peak" ] && [ "$cg_peak" -le "$budget" ] && ok "$name: cgroup peak usage $cg_peak <= $budget (page cache included)" \
            || not_ok "$name: cgroup peak usage '$cg_peak' vs $budget"
    else
        rmdir "$CG" 2>/dev/null
        as=$((size - 16777216))
        how="prlimit --as=$as"
        prlimit --as=$as $P run "$BIG" "$@" --mem "$budget" >"$TMP/$name.cap" 2>"$TMP/$name.err"
        st=$?
    fi
    [ $st -eq 0 ] && ok "$name: capped run ($how) ends normally" || not_ok "$name: capped run ($how): status $st: $(tail -3 "$TMP/$name.err")"
    grep -q '^load: .*(--load stream)' "$TMP/$name.err" && ok "$name: the planner chose to stream" \
        || not_ok "$name: mode: $(grep '^load:' "$TMP/$name.err")"
    hwm=$(sed -n 's/^generation: .*; peak RSS .* (VmHWM \([0-9]*\) bytes)$/\1/p' "$TMP/$name.err")
    [ -n "$hwm" ] && [ "$hwm" -gt 0 ] && [ "$hwm" -le "$budget" ] && ok "$name: peak RSS (VmHWM) $hwm <= --mem $budget" \
        || not_ok "$name: peak RSS '$hwm' vs --mem $budget"
}
capped greedy $ARGS
grep -q '^\[context full: dropped' "$TMP/greedy.err" && ok "greedy: the context filled and shifted under the cap" \
    || not_ok "greedy: no context shift: $(tail -3 "$TMP/greedy.err")"
if [ -s "$TMP/big.mmap" ] && cmp -s "$TMP/big.mmap" "$TMP/greedy.cap"; then ok "greedy: capped streamed ids = uncapped mapped ids ($(cut -c1-30 "$TMP/big.mmap")...)"
else not_ok "greedy: capped ids $(cat "$TMP/greedy.cap") vs uncapped $(cat "$TMP/big.mmap")"; fi
# Greedy ids of random weights repeat a lot: sampled ids (same seed) are a
# finer comparison, as any change in the logits moves them.
SAMPLED="--prompt-ids $PROMPT -c 64 -n 40 --ignore-eos --temp 1 --seed 3 -t 2 --print-ids"
$P run "$BIG" $SAMPLED --load mmap >"$TMP/sampled.mmap" 2>"$TMP/big.err" || not_ok "uncapped sampled run: $(cat "$TMP/big.err")"
capped sampled $SAMPLED
if [ -s "$TMP/sampled.mmap" ] && cmp -s "$TMP/sampled.mmap" "$TMP/sampled.cap"; then ok "sampled: capped streamed ids = uncapped mapped ids ($(cut -c1-30 "$TMP/sampled.mmap")...)"
else not_ok "sampled: capped ids $(cat "$TMP/sampled.cap") vs uncapped $(cat "$TMP/sampled.mmap")"; fi
finish

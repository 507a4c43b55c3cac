#!/bin/sh
# t_load_modes.sh - the three ways of reaching the weights (--load mmap,
# read, stream) give the same bytes out: for every logits and greedy case
# of the fixtures, the logits files and the greedy ids are identical across
# the modes, also with prompt steps smaller than the prompt (-b 3, so stream
# mode reads every layer once per chunk). Then a larger random model
# (8 quantized layers, mixed types per layer) cycles several layers through
# the two slots, also with resident layers (--stream-window); the stream
# window stays far below the model's size; a model file truncated while it
# is streamed ends the run with one line and status 2; only read mode's
# weights ask for transparent huge pages.
. tests/lib.sh
# the models are data: the release mkmodel writes the same bytes, faster
# (t_inspect.sh runs the ASan one)
MK=${MK:-build/rel/tools/mkmodel}
M=$FIX/models

# (the bookkeeping in the shell: a process for each small step, rm, sed,
# tr, wc, cost more CPU here than the release build's runs)
# listed MODES: $listed = "a, b, c"
listed() { listed=; for _m in $1; do listed=$listed${listed:+, }$_m; done; }

# same_logits NAME MODEL IDS MODES [pith options...]: the logits files of
# the listed load modes are byte-identical (mmap first: the reference).
same_logits() {
    _name=$1 _model=$2 _ids=$3 _modes=$4; shift 4
    for mode in $_modes; do
        : >"$TMP/$mode.f32" # (empty unless the run writes it)
        if ! "$BIN" logits "$_model" --prompt-ids "$_ids" --out "$TMP/$mode.f32" --load "$mode" "$@" \
            >"$TMP/out" 2>"$TMP/err"; then
            not_ok "$_name: --load $mode failed: $(head -c 300 "$TMP/err")"
            return
        fi
    done
    for mode in $_modes; do
        if [ ! -s "$TMP/$mode.f32" ] || { [ $mode != mmap ] && ! cmp -s "$TMP/mmap.f32" "$TMP/$mode.f32"; }; then
            not_ok "$_name: logits of --load $mode differ from mmap's"
            return
        fi
    done
    listed "$_modes"
    ok "$_name: logits identical with --load $listed ($(wc -c <"$TMP/mmap.f32") bytes)"
}

# same_ids NAME MODEL IDS MODES [pith options...]: greedy ids identical.
same_ids() {
    _name=$1 _model=$2 _ids=$3 _modes=$4; shift 4
    ref=
    for mode in $_modes; do
        got=$("$BIN" run "$_model" --prompt-ids "$_ids" -n 32 --temp 0 --print-ids --load "$mode" "$@" 2>"$TMP/err")
        if [ $? -ne 0 ] || [ -z "$got" ]; then
            not_ok "$_name: --load $mode failed: $(head -c 300 "$TMP/err")"
            return
        fi
        [ -z "$ref" ] && ref=$got
        if [ "$got" != "$ref" ]; then
            not_ok "$_name: greedy ids of --load $mode differ: $got vs $ref"
            return
        fi
    done
    _n=0 _rest=$ref,
    while [ -n "$_rest" ]; do _rest=${_rest#*,}; _n=$((_n + 1)); done
    listed "$_modes"
    ok "$_name: greedy ids identical with --load $listed ($_n ids)"
}

# Every fixture case: the three modes, then steps of 3 tokens (mmap, stream).
# Per model file and kind, the case with the longest prompt runs the ASan
# build (every weight type through every mode and step size under the
# sanitizers); the others the release build ./pith (the same comparisons:
# they check the bytes that come out, which ASan does not change). The
# Q8_0, Q4_K_M and Q6_K files' types go through the ASan build below, in
# the larger models (Q8_0; Q4_K and Q6_K), in every mode and step size,
# logits and greedy: their cases run the release build alone (an ASan
# case cost twice the release build's 0.5 CPU s).
REL=${PITH_REL:-./pith}
[ -x "$REL" ] || { not_ok "./pith is not built (make pith)"; finish; }
asan_cases=$(awk -F'\t' '$1 != "case_id" && $2 !~ /-(Q8_0|Q4_K_M|Q6_K)\.gguf$/ { k = $2 " " $3; n = split($4, a, ",");
    if (n > len[k]) { len[k] = n; best[k] = $1 } } END { for (k in best) print best[k] }' "$FIX/cases.tsv")
asan_cases=" $(echo $asan_cases) "
TAB=$(printf '\t')
n_cases=0
while IFS=$TAB read -r id model kind prompt rest; do
    [ "$id" = case_id ] && continue
    n_cases=$((n_cases + 1))
    BIN=$REL
    case "$asan_cases" in *" $id "*) BIN=$PITH ;; esac
    case "$kind" in
    logits)
        same_logits "$id" "$M/$model" "$prompt" "mmap read stream" -t 2
        same_logits "$id -b 3" "$M/$model" "$prompt" "mmap stream" -t 2 -b 3 ;;
    greedy)
        same_ids "$id" "$M/$model" "$prompt" "mmap read stream" -t 2
        same_ids "$id -b 3" "$M/$model" "$prompt" "mmap stream" -t 2 -b 3 ;;
    *) not_ok "$id: unknown kind '$kind'" ;;
    esac
done <"$FIX/cases.tsv"
[ "$n_cases" -ge 40 ] && ok "$n_cases fixture cases compared, $(echo $asan_cases | wc -w) of them with the ASan build" \
    || not_ok "only $n_cases fixture cases in cases.tsv"
BIN=$PITH

# --no-mmap is --load read; an unknown mode is refused.
ids=$(awk -F'\t' '$1 == "pub_tq3_Q8_0_logits_r16" { print $4 }' "$FIX/cases.tsv")
"$PITH" logits "$M/tiny-qwen3-Q8_0.gguf" --prompt-ids "$ids" --out "$TMP/nm.f32" --no-mmap >/dev/null 2>&1
"$PITH" logits "$M/tiny-qwen3-Q8_0.gguf" --prompt-ids "$ids" --out "$TMP/rd.f32" --load read >/dev/null 2>&1
[ -s "$TMP/nm.f32" ] && cmp -s "$TMP/nm.f32" "$TMP/rd.f32" && ok "--no-mmap equals --load read" || not_ok "--no-mmap vs --load read"
# x86's AVX-512 VNNI set reads Q8_0 and Q4_0 repacked with --load read (the same
# logits: the fixture cases above), but on x86 the planner maps by default with
# every set (KernelSet.map_first; the boards' dotprod set reads first: t_arm_kernels.sh).
set=$("$PITH" --version | sed -n 's/^kernels: //p')
for q in Q8_0 Q4_0; do
    got=$("$PITH" run "$M/tiny-qwen3-$q.gguf" -p hi --plan 2>&1 | sed -n 's/^memory plan for .*: --load \([a-z]*\),.*/\1/p')
    [ "$got" = mmap ] && ok "$set: $q is mapped by default" || not_ok "$set: $q: the planner chose '$got', want mmap"
done
expect_fail2 "logits --load bogus" "$PITH" logits "$M/tiny-qwen3-Q8_0.gguf" --prompt-ids 1 --out "$TMP/x.f32" --load bogus
expect_fail2 "run --load bogus" "$PITH" run "$M/tiny-qwen3-Q8_0.gguf" -p hi --load bogus
expect_fail2 "bench --load bogus" "$PITH" bench "$M/tiny-qwen3-Q8_0.gguf" -p 4 -n 4 --load bogus

# Larger random models: 8 layers cycle through the two slots; q4_k_m mixes
# Q4_K and Q6_K layers (slots sized for the largest), q8_0 has an untied
# output matrix. Vocabulary 3000: several output chunks per step.
BIG="--layers 8 --embd 256 --ff 768 --heads 4 --kv-heads 2 --head-dim 64 --vocab 3000 --ctx 4096"
"$MK" "$TMP/big-q4km.gguf" $BIG --type q4_k_m --tied --seed 11 >/dev/null 2>&1 &&
"$MK" "$TMP/big-q8.gguf" $BIG --type q8_0 --untied --seed 12 >/dev/null 2>&1 &&
    ok "mkmodel wrote two 8-layer models" || not_ok "mkmodel failed"
long=$(awk 'BEGIN { for (i = 1; i <= 40; i++) printf "%s%d", (i > 1 ? "," : ""), (i * 7919) % 3000 }')
for f in big-q4km big-q8; do
    same_logits "$f, 40 ids" "$TMP/$f.gguf" "$long" "mmap read stream" -t 2
    same_logits "$f, 40 ids, -b 3" "$TMP/$f.gguf" "$long" "mmap stream" -t 2 -b 3
    same_logits "$f, 40 ids, -b 1, 1 thread" "$TMP/$f.gguf" "$long" "mmap stream" -t 1 -b 1
    same_ids "$f greedy" "$TMP/$f.gguf" "$long" "mmap read stream" -t 2 -b 7
    # Resident layers: a window bigger than the two slots keeps the first
    # layers in the arena and streams the rest.
    # (mmap's logits with the same steps: computed once for the three windows)
    : >"$TMP/mmap-b5.f32"
    "$PITH" logits "$TMP/$f.gguf" --prompt-ids "$long" --out "$TMP/mmap-b5.f32" --load mmap -b 5 >/dev/null 2>&1
    for w in 3M 6M 100M; do
        : >"$TMP/w.f32"
        "$PITH" logits "$TMP/$f.gguf" --prompt-ids "$long" --out "$TMP/w.f32" --load stream --stream-window $w -b 5 \
            >"$TMP/out" 2>"$TMP/err"
        if [ -s "$TMP/w.f32" ] && cmp -s "$TMP/w.f32" "$TMP/mmap-b5.f32"; then
            ok "$f: --stream-window $w gives mmap's logits"
        else not_ok "$f: --stream-window $w: $(head -c 300 "$TMP/err")"; fi
    done
done

"$PITH" logits "$TMP/big-q8.gguf" --prompt-ids 1,2 --out "$TMP/x.f32" --load stream --stream-window 6M --plan \
    >"$TMP/out" 2>&1
grep -q "resident layers" "$TMP/out" && ok "--stream-window 6M plans resident layers" \
    || not_ok "--stream-window 6M: no resident layers in the plan: $(head -c 300 "$TMP/out")"

check "bench --load stream --stream-window 3M --keep-cache" "$PITH" bench "$TMP/big-q8.gguf" -p 8 -n 4 -r 1 \
    --load stream --stream-window 3M --keep-cache
grep -q "1 of 8 layers resident" "$TMP/out" && ok "bench reports 1 of 8 layers resident" \
    || not_ok "bench stream line: $(grep stream: "$TMP/out")"

# Huge pages for the read-mode weights only (port_arena_huge): a server
# holds its arena, so /proc shows which ranges asked for them (VmFlags
# "hg"): with --load read, whole huge pages inside the weights' bytes of the
# plan; with mmap, none (the KV cache and activations stay on small pages).
# hg_kib MODE: the KiB of the server's ranges that asked for huge pages.
hg_kib() {
    "$PITH" serve "$TMP/big-q8.gguf" --load "$1" -t 1 --port 0 2>"$TMP/hg.err" &
    hp=$!
    i=0
    while [ $i -lt 300 ] && ! grep -q '^pith serve: ' "$TMP/hg.err" && kill -0 $hp 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
    awk '/^Size:/ { s = $2 } /^VmFlags:.* hg/ { n += s } END { print n + 0 }' /proc/$hp/smaps
    kill $hp 2>/dev/null; wait $hp 2>/dev/null
}
huge=$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size 2>/dev/null)
"$PITH" logits "$TMP/big-q8.gguf" --prompt-ids 1,2 --out "$TMP/x.f32" --load read --plan >"$TMP/out" 2>&1
wbytes=$(awk '/weights \(read, no mmap\)/ { for (i = 2; i <= NF; i++) if ($i == "bytes") { print $(i - 1); exit } }' "$TMP/out")
read_kib=$(hg_kib read)
mmap_kib=$(hg_kib mmap)
if [ -z "$huge" ]; then
    [ "$read_kib" -eq 0 ] && [ "$mmap_kib" -eq 0 ] && ok "no transparent huge pages in this kernel: none asked for" \
        || not_ok "no THP here, yet ranges asked for huge pages: read $read_kib KiB, mmap $mmap_kib KiB"
elif [ -n "$wbytes" ] && [ "$read_kib" -gt 0 ] && [ $((read_kib * 1024 % huge)) -eq 0 ] &&
     [ $((read_kib * 1024)) -le "$wbytes" ] && [ $((read_kib * 1024)) -gt $((wbytes - 2 * huge)) ] && [ "$mmap_kib" -eq 0 ]; then
    ok "huge pages asked for $read_kib KiB of the $wbytes weight bytes with --load read (pages of $huge bytes), none with mmap"
else not_ok "huge pages: read $read_kib KiB (weights $wbytes bytes, pages of $huge), mmap $mmap_kib KiB"; fi

# The window is bounded: with 24 layers, stream mode's arena is a fraction
# of the file, read mode's holds all of it.
"$MK" "$TMP/deep.gguf" --layers 24 --embd 256 --ff 1024 --heads 4 --kv-heads 2 --head-dim 64 --vocab 3000 \
    --ctx 1024 --type q8_0 --seed 13 >/dev/null 2>&1
size=$(wc -c <"$TMP/deep.gguf")
# the arena's size: the number before "bytes" on the line of the arena's total
total() { awk '/^ *(arena|total)/ { for (i = 2; i <= NF; i++) if ($i == "bytes") { print $(i - 1); exit } }' "$TMP/out"; }
check "logits --load stream --plan" "$PITH" logits "$TMP/deep.gguf" --prompt-ids 1,2,3 --out "$TMP/p.f32" --load stream --plan
stream_total=$(total)
check "logits --load read --plan" "$PITH" logits "$TMP/deep.gguf" --prompt-ids 1,2,3 --out "$TMP/p.f32" --load read --plan
read_total=$(total)
if [ -n "$stream_total" ] && [ -n "$read_total" ] && [ "$stream_total" -lt $((size / 4)) ] && [ "$read_total" -gt "$size" ] ||
   { [ -n "$read_total" ] && [ "$read_total" -gt $((size * 9 / 10)) ] && [ "$stream_total" -lt $((size / 4)) ]; }; then
    ok "stream arena $stream_total bytes < a quarter of the $size-byte file (read: $read_total)"
else not_ok "stream arena $stream_total, read arena $read_total, file $size"; fi
check "run --load stream --plan" "$PITH" run "$TMP/deep.gguf" -p hi --load stream --plan
run_total=$(total)
if [ -n "$run_total" ] && [ "$run_total" -lt "$size" ]; then ok "run --load stream --plan: arena total $run_total < file $size"
else not_ok "run --load stream --plan total '$run_total' (file $size): $(head -c 400 "$TMP/out")"; fi

# A file truncated before the run is refused when it is opened.
head -c $((size / 2)) "$TMP/deep.gguf" >"$TMP/half.gguf"
expect_fail2 "truncated file, --load stream" "$PITH" logits "$TMP/half.gguf" --prompt-ids 1,2 --out "$TMP/x.f32" --load stream
# A file truncated while streaming: the next read fails with one line,
# status 2. The run writes logits after every token; the file is cut as
# soon as the first ones are out (2000 steps remain at that point).
cp "$TMP/big-q8.gguf" "$TMP/cut.gguf"
many=$(awk 'BEGIN { for (i = 1; i <= 2000; i++) printf "%s%d", (i > 1 ? "," : ""), (i * 7919) % 3000 }')
rm -f "$TMP/cut.f32"
"$PITH" logits "$TMP/cut.gguf" --prompt-ids "$many" --out "$TMP/cut.f32" --load stream -b 1 -t 1 \
    >"$TMP/cut.out" 2>"$TMP/cut.err" &
pid=$!
tries=0
while [ ! -s "$TMP/cut.f32" ] && [ $tries -lt 3000 ] && kill -0 $pid 2>/dev/null; do sleep 0.01; tries=$((tries + 1)); done
truncate -s $(($(wc -c <"$TMP/cut.gguf") / 2)) "$TMP/cut.gguf"
wait $pid
st=$?
lines=$(wc -l <"$TMP/cut.err")
if [ $st -eq 2 ] && [ "$lines" -eq 1 ] && grep -q "^pith: $TMP/cut.gguf: byte [0-9]*: " "$TMP/cut.err"; then
    ok "truncated while streaming: $(cat "$TMP/cut.err")"
else not_ok "truncated while streaming: status $st, $lines lines: $(head -c 300 "$TMP/cut.err")"; fi
finish

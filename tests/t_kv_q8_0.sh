#!/bin/sh
# t_kv_q8_0.sh - the Q8_0 KV cache (--kv-type q8_0) on the fixtures.
#
# The fixture tolerances (README section 6 of the fixtures) assume an F32 KV
# cache. A Q8_0 cache quantizes every cached key and value to 8 bits per
# element, as Q8_0 weights do, so every logits case of cases.tsv runs with
# --kv-type q8_0 against the QUANT class (mean KL <= 5e-3 and every KL_p <=
# 1e-2), whatever the weight type. Models whose head dimension is not a
# multiple of 32 (stories260K: 8) cannot hold Q8_0 rows per head: for them
# the case must be refused with one line naming --kv-type q8_0 and the head
# dimension. Then: other step sizes and threads, the greedy cases of the
# quantized models (free-running prefix and teacher forcing), and --plan.
# The measured distances (to the reference, and to pith's own F32-cache
# logits) of the f16 and q8_0 caches are printed as '#' lines per class.
. tests/lib.sh
# the comparison is arithmetic on data: the release cmplogits gives the same
# verdicts (t_logits.sh runs the ASan one)
CMP=${CMP:-build/rel/tools/cmplogits}
M=$FIX/models

field() { awk -F'\t' -v c="$1" -v k="$2" '$1 == c { print $k }' "$FIX/cases.tsv"; }
# The cases are read once, a line at a time (c model kind ids expected
# notes), and their notes and id lists taken apart by the shell: a process
# per field was half of the script's CPU time.
# note NOTES KEY: $note = the value of KEY in NOTES ("k=v;k=v;..."), or empty
note() { note=";$1"; case "$note" in *";$2="*) note=${note#*";$2="}; note=${note%%;*} ;; *) note= ;; esac; }
# count_ids LIST: $n = the number of ids in LIST ("1,2,3")
count_ids() { n=0; _rest=$1,; while [ -n "$_rest" ]; do _rest=${_rest#*,}; n=$((n + 1)); done; }
# first_ids LIST N: $first = the first N ids of LIST
first_ids() {
    first=; _rest=$1,; _i=0
    while [ $_i -lt "$2" ] && [ -n "$_rest" ]; do first=$first${first:+,}${_rest%%,*}; _rest=${_rest#*,}; _i=$((_i + 1)); done
}
TAB=$(printf '\t')
# (an empty field as "-": read takes tabs in a row as one)
awk -F'\t' -v OFS='\t' '{ for (i = 1; i <= NF; i++) if ($i == "") $i = "-"; print }' "$FIX/cases.tsv" >"$TMP/cases.tsv"
REL=${PITH_REL:-./pith}
[ -x "$REL" ] || { not_ok "./pith is not built (make pith)"; finish; }
# head dimension of a model: key_length, else embedding_length / head_count
# (once per model file: the cases of a model are on consecutive lines)
head_dim() { [ "$1" = "$hd_model" ] || { hd=$(head_dim_of "$1"); hd_model=$1; }; }
head_dim_of() {
    "$PITH" inspect "$1" >"$TMP/insp" 2>/dev/null
    kl=$(sed -n 's/^ *[a-z0-9]*\.attention\.key_length  *u32  *= *//p' "$TMP/insp")
    if [ -n "$kl" ]; then echo "$kl"; return; fi
    e=$(sed -n 's/^ *[a-z0-9]*\.embedding_length  *u32  *= *//p' "$TMP/insp")
    h=$(sed -n 's/^ *[a-z0-9]*\.attention\.head_count  *u32  *= *//p' "$TMP/insp")
    echo $((e / h))
}
# measures of the cmplogits lines (after "TOL KV ref|own "): "max_rel mean_kl max_kl"
measures() { sed -n 's/^\([^ ]* [^ ]* [^ ]*\) .*max rel \([^,]*\), max abs [^,]*, mean KL \([^,]*\), max KL \([^,]*\),.*/\1 \2 \3 \4/p' "$1"; }

: >"$TMP/lines"
while IFS=$TAB read -r c model kind ids expected notes <&3; do
    [ "$kind" = logits ] || continue
    model=$M/$model
    note "$notes" tol; tol=$note
    note "$notes" n_vocab; vocab=$note
    head_dim "$model"
    if [ $((hd % 32)) -ne 0 ]; then
        expect_fail2 "$c: q8_0 cache refused for head dimension $hd" \
            "$PITH" logits "$model" --prompt-ids "$ids" --out "$TMP/q.f32" --kv-type q8_0
        if grep -q -- "--kv-type q8_0" "$TMP/err" && grep -q "head dimension $hd" "$TMP/err"; then
            ok "$c: the refusal names --kv-type q8_0 and head dimension $hd"
        else not_ok "$c: refusal message: $(cat "$TMP/err")"; fi
        continue
    fi
    # the asserted run (q8_0) under the sanitizers; the f32 and f16 runs
    # only give the printed numbers: the release build
    for kv in f32 f16 q8_0; do
        rm -f "$TMP/$kv.f32"
        bin=$REL; [ $kv = q8_0 ] && bin=$PITH
        "$bin" logits "$model" --prompt-ids "$ids" --out "$TMP/$kv.f32" --kv-type $kv -t 2 >/dev/null 2>"$TMP/err.$kv"
    done
    if [ -s "$TMP/q8_0.f32" ] && "$CMP" --ref "$FIX/logits/$c.f32" --class QUANT --vocab "$vocab" "$TMP/q8_0.f32" \
        >"$TMP/cmp" 2>&1; then
        ok "$c ($tol weights), q8_0 cache vs reference: $(sed 's/^[^ ]* //' "$TMP/cmp")"
    else not_ok "$c, q8_0 cache: $(head -c 300 "$TMP/err.q8_0") $(cat "$TMP/cmp" 2>/dev/null)"; fi
    # the numbers for docs/memory.md: each cache against the reference and
    # against pith's own F32-cache logits (class F32 printed, not asserted)
    for kv in f16 q8_0; do
        "$CMP" --ref "$FIX/logits/$c.f32" --class QUANT --vocab "$vocab" "$TMP/$kv.f32" >"$TMP/m" 2>&1
        IFS= read -r line <"$TMP/m"; echo "$tol $kv ref $line" >>"$TMP/lines"
        "$CMP" --ref "$TMP/f32.f32" --class QUANT --vocab "$vocab" "$TMP/$kv.f32" >"$TMP/m" 2>&1
        IFS= read -r line <"$TMP/m"; echo "$tol $kv own $line" >>"$TMP/lines"
    done
done 3<"$TMP/cases.tsv"
measures "$TMP/lines" >"$TMP/measures"
# worst of each measure per (weight class, cache, comparison)
awk '{ k = $1 " weights, " $2 " cache vs " ($3 == "ref" ? "the reference" : "pith F32 cache"); n[k]++
       if ($4 > r[k]) r[k] = $4; if ($5 > mk[k]) mk[k] = $5; if ($6 > x[k]) x[k] = $6 }
     END { for (k in n) printf "# %s: %d cases, max rel %.3g, mean KL %.3g, max KL %.3g\n", k, n[k], r[k], mk[k], x[k] }' \
    "$TMP/measures" | sort

# other step sizes and thread counts with a q8_0 cache: same class
c=pub_tq3_Q4_K_M_logits_r40
model=$M/$(field $c 2) ids=$(field $c 4)
for opts in "-b 1 -t 1" "-b 7 -t 3" "--no-mmap -b 40 -t 2"; do
    rm -f "$TMP/q.f32"
    # shellcheck disable=SC2086
    if "$PITH" logits "$model" --prompt-ids "$ids" --out "$TMP/q.f32" --kv-type q8_0 $opts \
        >/dev/null 2>"$TMP/err" &&
        "$CMP" --ref "$FIX/logits/$c.f32" --class QUANT --vocab 2026 "$TMP/q.f32" >"$TMP/cmp" 2>&1; then
        ok "$c q8_0 cache, $opts: $(sed 's/^[^ ]* //' "$TMP/cmp")"
    else not_ok "$c q8_0 cache, $opts: $(head -c 300 "$TMP/err") $(cat "$TMP/cmp" 2>/dev/null)"; fi
done

# greedy cases of the quantized models (class QUANT: gap threshold 0.3)
while IFS=$TAB read -r c model kind prompt expected notes <&3; do
    note "$notes" tol
    [ "$kind" = greedy ] && [ "$note" = QUANT ] || continue
    model=$M/$model
    note "$notes" exact_prefix; prefix=$note
    note "$notes" greedy_gap_threshold; thr=$note
    count_ids "$expected"; n_exp=$n
    got=$("$PITH" run "$model" --prompt-ids "$prompt" -n "$n_exp" --temp 0 --kv-type q8_0 --print-ids \
        --ignore-eos 2>"$TMP/err")
    first_ids "$got" "$prefix"; got_prefix=$first
    first_ids "$expected" "$prefix"
    if [ "$prefix" -ge 1 ] && [ "$got_prefix" = "$first" ]; then
        ok "$c, q8_0 cache: free-running: first $prefix ids equal the reference"
    else not_ok "$c, q8_0 cache: free-running (prefix $prefix): got '$got' $(head -c 200 "$TMP/err")"; fi
    # teacher forcing: prompt + expected[0 .. n-2] in one pass; steps whose
    # reference gap is >= the threshold must give expected[k]
    count_ids "$prompt"; n_prompt=$n
    first_ids "$expected" $((n_exp - 1))
    seq="$prompt,$first"
    rm -f "$TMP/tf.f32"
    if "$PITH" logits "$model" --prompt-ids "$seq" --out "$TMP/tf.f32" --kv-type q8_0 -t 2 >/dev/null 2>"$TMP/err"; then
        note "$notes" n_vocab; vocab=$note
        note "$notes" gaps
        # the argmax of each row from the prompt's last on, beside the expected
        # id and the reference's gap of that step
        res=$(od -An -v -f -w$((vocab * 4)) "$TMP/tf.f32" |
            awk -v t="$thr" -v skip=$((n_prompt - 1)) -v ex="$expected" -v gaps="$note" '
                BEGIN { ne = split(ex, e, ","); ng = split(gaps, g, ",") }
                { b = 1; for (i = 2; i <= NF; i++) if ($i + 0 > $b + 0) b = i
                  k = NR - skip; if (k < 1 || k > ne || k > ng) next
                  if (g[k] + 0 >= t + 0) { n++; if (b - 1 != e[k]) w++ } }
                END { printf "%d %d", w + 0, n + 0 }')
        wrong=${res% *} checked=${res#* }
        if [ "$wrong" -eq 0 ] && [ "$checked" -gt 0 ]; then
            ok "$c, q8_0 cache: teacher forcing: all $checked steps with gap >= $thr right"
        else not_ok "$c, q8_0 cache: teacher forcing: $wrong of $checked steps with gap >= $thr wrong"; fi
    else not_ok "$c, q8_0 cache: teacher forcing run: $(head -c 200 "$TMP/err")"; fi
done 3<"$TMP/cases.tsv"

# --plan: the q8_0 cache takes 34/64 of the f16 cache's bytes (Q8_0 blocks
# of 32 elements in 34 bytes, F16 64 bytes)
kvbytes() { "$PITH" run "$M/tiny-qwen3-Q8_0.gguf" -p hi -c 1024 --kv-type "$1" --plan 2>/dev/null |
    awk '$1 == "kv" && $2 == "cache" { print $3 }'; }
f16=$(kvbytes f16) q8=$(kvbytes q8_0) f32=$(kvbytes f32)
# 4 layers x 1024 positions x (K + V) x 2 heads x 128 elements
if [ "$f32" = $((4 * 1024 * 2 * 256 * 4)) ] && [ "$f16" = $((4 * 1024 * 2 * 256 * 2)) ] &&
    [ "$q8" = $((4 * 1024 * 2 * 256 / 32 * 34)) ]; then
    ok "run --plan: kv cache f32 $f32, f16 $f16, q8_0 $q8 bytes"
else not_ok "run --plan: kv cache f32 '$f32' f16 '$f16' q8_0 '$q8' bytes"; fi
expect_fail2 "run: --kv-type q8 (not a type) is refused" "$PITH" run "$M/tiny-qwen3-Q8_0.gguf" -p hi --kv-type q8
finish

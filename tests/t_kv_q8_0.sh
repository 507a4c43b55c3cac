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
note() { field "$1" 6 | tr ';' '\n' | sed -n "s/^$2=//p"; }
REL=${PITH_REL:-./pith}
[ -x "$REL" ] || { not_ok "./pith is not built (make pith)"; finish; }
# head dimension of a model: key_length, else embedding_length / head_count
# (once per model file: the cases share them)
head_dim() {
    hd_cache=$TMP/hd.$(basename "$1")
    [ -s "$hd_cache" ] || head_dim_of "$1" >"$hd_cache"
    cat "$hd_cache"
}
head_dim_of() {
    "$PITH" inspect "$1" >"$TMP/insp" 2>/dev/null
    kl=$(sed -n 's/^ *[a-z0-9]*\.attention\.key_length  *u32  *= *//p' "$TMP/insp")
    if [ -n "$kl" ]; then echo "$kl"; return; fi
    e=$(sed -n 's/^ *[a-z0-9]*\.embedding_length  *u32  *= *//p' "$TMP/insp")
    h=$(sed -n 's/^ *[a-z0-9]*\.attention\.head_count  *u32  *= *//p' "$TMP/insp")
    echo $((e / h))
}
# measures of a cmplogits line: "max_rel mean_kl max_kl"
measures() { sed -n 's/.*max rel \([^,]*\), max abs [^,]*, mean KL \([^,]*\), max KL \([^,]*\),.*/\1 \2 \3/p' "$1"; }

: >"$TMP/measures"
for c in $(awk -F'\t' '$3 == "logits" { print $1 }' "$FIX/cases.tsv"); do
    model=$M/$(field "$c" 2)
    ids=$(field "$c" 4)
    tol=$(note "$c" tol)
    vocab=$(note "$c" n_vocab)
    hd=$(head_dim "$model")
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
        echo "$tol $kv ref $(measures "$TMP/m")" >>"$TMP/measures"
        "$CMP" --ref "$TMP/f32.f32" --class QUANT --vocab "$vocab" "$TMP/$kv.f32" >"$TMP/m" 2>&1
        echo "$tol $kv own $(measures "$TMP/m")" >>"$TMP/measures"
    done
done
# worst of each measure per (weight class, cache, comparison)
awk '{ k = $1 " weights, " $2 " cache vs " ($3 == "ref" ? "the reference" : "pith F32 cache"); n[k]++
       if ($4 > r[k]) r[k] = $4; if ($5 > mk[k]) mk[k] = $5; if ($6 > x[k]) x[k] = $6 }
     END { for (k in n) printf "# %s: %d cases, max rel %.3g, mean KL %.3g, max KL %.3g\n", k, n[k], r[k], mk[k], x[k] }' \
    "$TMP/measures" | sort

# other step sizes and thread counts with a q8_0 cache: same class
c=pub_tq3_Q4_K_M_logits_r40
for opts in "-b 1 -t 1" "-b 7 -t 3" "--no-mmap -b 40 -t 2"; do
    rm -f "$TMP/q.f32"
    # shellcheck disable=SC2086
    if "$PITH" logits "$M/$(field $c 2)" --prompt-ids "$(field $c 4)" --out "$TMP/q.f32" --kv-type q8_0 $opts \
        >/dev/null 2>"$TMP/err" &&
        "$CMP" --ref "$FIX/logits/$c.f32" --class QUANT --vocab 2026 "$TMP/q.f32" >"$TMP/cmp" 2>&1; then
        ok "$c q8_0 cache, $opts: $(sed 's/^[^ ]* //' "$TMP/cmp")"
    else not_ok "$c q8_0 cache, $opts: $(head -c 300 "$TMP/err") $(cat "$TMP/cmp" 2>/dev/null)"; fi
done

# greedy cases of the quantized models (class QUANT: gap threshold 0.3)
argmax_rows() { # FILE VOCAB: the argmax of each row, one per line
    od -An -v -f -w$(($2 * 4)) "$1" |
        awk '{ b = 1; for (i = 2; i <= NF; i++) if ($i + 0 > $b + 0) b = i; print b - 1 }'
}
for c in $(awk -F'\t' '$3 == "greedy" && $6 ~ /tol=QUANT/ { print $1 }' "$FIX/cases.tsv"); do
    model=$M/$(field "$c" 2)
    prompt=$(field "$c" 4)
    expected=$(field "$c" 5)
    prefix=$(note "$c" exact_prefix)
    thr=$(note "$c" greedy_gap_threshold)
    n_exp=$(echo "$expected" | tr ',' '\n' | wc -l)
    got=$("$PITH" run "$model" --prompt-ids "$prompt" -n "$n_exp" --temp 0 --kv-type q8_0 --print-ids \
        --ignore-eos 2>"$TMP/err")
    if [ "$prefix" -ge 1 ] && [ "$(echo "$got" | cut -d, -f1-"$prefix")" = "$(echo "$expected" | cut -d, -f1-"$prefix")" ]; then
        ok "$c, q8_0 cache: free-running: first $prefix ids equal the reference"
    else not_ok "$c, q8_0 cache: free-running (prefix $prefix): got '$got' $(head -c 200 "$TMP/err")"; fi
    # teacher forcing: prompt + expected[0 .. n-2] in one pass; steps whose
    # reference gap is >= the threshold must give expected[k]
    n_prompt=$(echo "$prompt" | tr ',' '\n' | wc -l)
    seq="$prompt,$(echo "$expected" | cut -d, -f1-$((n_exp - 1)))"
    rm -f "$TMP/tf.f32"
    if "$PITH" logits "$model" --prompt-ids "$seq" --out "$TMP/tf.f32" --kv-type q8_0 -t 2 >/dev/null 2>"$TMP/err"; then
        argmax_rows "$TMP/tf.f32" "$(note "$c" n_vocab)" | tail -n +"$n_prompt" >"$TMP/am"
        echo "$expected" | tr ',' '\n' >"$TMP/exp"
        note "$c" gaps | tr ',' '\n' >"$TMP/gaps"
        res=$(paste "$TMP/am" "$TMP/exp" "$TMP/gaps" |
            awk -v t="$thr" 'NF == 3 && $3 + 0 >= t + 0 { n++; if ($1 != $2) w++ } END { printf "%d %d", w + 0, n + 0 }')
        wrong=${res% *} checked=${res#* }
        if [ "$wrong" -eq 0 ] && [ "$checked" -gt 0 ]; then
            ok "$c, q8_0 cache: teacher forcing: all $checked steps with gap >= $thr right"
        else not_ok "$c, q8_0 cache: teacher forcing: $wrong of $checked steps with gap >= $thr wrong"; fi
    else not_ok "$c, q8_0 cache: teacher forcing run: $(head -c 200 "$TMP/err")"; fi
done

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

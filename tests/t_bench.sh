#!/bin/sh
# t_bench.sh - pith bench: the table on a fixture model (both kernel paths),
# and bad arguments refused with one line. Speed itself is never asserted.
. tests/lib.sh
M=$FIX/models/tiny-qwen3-Q4_K_M.gguf
for flag in "" --ref; do
    check "bench runs $flag" $PITH bench "$M" -p 8 -n 4 -r 2 -t 2 $flag
    if grep -q '^| pp8 ' "$TMP/out" && grep -q '^| tg4 ' "$TMP/out" && grep -q 'weights read per generated token' "$TMP/out"
    then ok "bench $flag prints the pp8 and tg4 rows and the bytes per token"; else not_ok "bench $flag table: $(head -c 300 "$TMP/out")"; fi
done
# The table: mean ± sd, every line as wide as the header (± is one column).
tbl=$(grep '^|' "$TMP/out" | sed 's/±/+/g' | awk '{ print length($0) }' | sort -u | wc -l)
grep -q '^| tg4 .* ± ' "$TMP/out" && [ "$tbl" -eq 1 ] && ok "bench table: ± and aligned columns" \
    || not_ok "bench table: $(grep '^|' "$TMP/out" | tr '\n' '/')"
grep -q '^kernels: reference C' "$TMP/out" && ok "bench --ref uses the reference kernels" || not_ok "bench --ref kernels line"
check "bench --no-avx512" $PITH bench "$M" -p 8 -n 2 -r 1 -t 2 --no-avx512
grep '^kernels:' "$TMP/out" | grep -q 'AVX-512' && not_ok "bench --no-avx512 kernels line: $(grep '^kernels:' "$TMP/out")" \
    || ok "bench --no-avx512 leaves the AVX-512 kernels out"
check "bench prompt only" $PITH bench "$M" -p 4 -n 0 -r 1
grep -q '^| tg' "$TMP/out" && not_ok "bench -n 0 prints no tg row" || ok "bench -n 0 prints no tg row"
expect_fail2 "bench without a model" $PITH bench
expect_fail2 "bench -p 0 -n 0" $PITH bench "$M" -p 0 -n 0
expect_fail2 "bench -r 0" $PITH bench "$M" -r 0
expect_fail2 "bench unknown option" $PITH bench "$M" --bogus
expect_fail2 "bench missing file" $PITH bench "$TMP/none.gguf"
finish

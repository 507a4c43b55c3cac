#!/bin/sh
# t_arm_kernels.sh - the NEON kernels (src/kernels/arm/) under qemu-user: part
# of `make ci-test` (CI's stage after make test, after tests/cross.sh,
# whose builds it uses), not of `make test`.
#
# tests/test_kernels.c, tests/test_kernels_attention.c (attention in tiles)
# and tests/test_kernels_rows.c (the multi-row kernels,
# kernels_arm_rows.c, kernels_arm_rows4.c, kernels_arm_kq.c, kernels_arm_v7.c:
# results and determinism), cross-built statically for aarch64, armv7 and
# armv6, run on an emulated CPU for each ARM code path, which must be the
# one chosen:
#   aarch64 on Cortex-A53 (no dotprod: Pi 3, 4, Zero 2 W)  -> "aarch64 NEON"
#   aarch64 on Cortex-A76 (dotprod, fp16: Pi 5)             -> "aarch64 NEON+dotprod+fp16"
#   aarch64 on qemu's "max" (dotprod, fp16, i8mm: newer boards) -> "aarch64 NEON+dotprod+i8mm+fp16"
#     (the SMMLA prompt tiles of kernels_arm_mm.c: the fixtures with the
#     planner's choice, packed weights, and with --load mmap, the file's layout
#     with its scales' copy; the A76 too)
#   armv7 on Cortex-A7 (32-bit OS)                          -> "armv7 NEON"
#   armv6 on ARM1176 (no NEON: Pi 1, Zero)                  -> "reference C"
# then `pith logits` of that build on fixture models of each quantized
# kernel family (Q8_0, Q4_0, Q4_K_M = Q4_K + Q6_K) and F16 on the same CPU,
# compared with llama.cpp's logits by cmplogits (README section 6
# tolerances). Five parts (tests/run.sh runs them side by side): one per CPU.
# The whole forward pass on the A76 (tests/test_forward.c: every fixture
# case, threads, steps, caches, two sequences, synthetic models; 150 CPU
# seconds of qemu) runs in tests/cross.sh, CI's emulation after make test,
# in place of that suite's fixture cases on the A76, which it repeated.
# Needs the cross compilers and qemu-user-static
# (toolchains/install-debian.sh).
# parts: a53 a76 max a7 arm1176
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
# the comparison is arithmetic on data: the release cmplogits gives the same
# verdicts (t_logits.sh runs the ASan one)
CMP=${CMP:-build/rel/tools/cmplogits}
M=$FIX/models
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

[ -x "$CMP" ] || make -s "$CMP" >"$TMP/build" 2>&1 || not_ok "build $CMP: $(grep -m3 -i error "$TMP/build" | tr '\n' ' ')"

mkvar() { make -s --no-print-directory TARGET="$1" "print-$2"; }

# build TRIPLE: build/TRIPLE/pith and build/TRIPLE/tests/test_kernels and
# test_kernels_rows (the Makefile's cross rules: the library objects are the
# pith build's), one part at a time (parts on the same target share them).
build() {
    t=$1 d=build/$1
    cc=$(mkvar "$t" CROSS_CC)
    if ! command -v "$cc" >/dev/null 2>&1; then not_ok "$t: no $cc (toolchains/install-debian.sh)"; return 1; fi
    lock "build/.lock-$t"
    make -s -j"$JOBS" TARGET="$t" "$d/pith" "$d/tests/test_kernels" "$d/tests/test_kernels_rows" \
        "$d/tests/test_kernels_attention" >"$TMP/build" 2>&1
    st=$?
    unlock
    if [ $st -eq 0 ]; then
        ok "$t: pith, test_kernels, test_kernels_rows and test_kernels_attention built"
    else
        not_ok "$t: build: $(grep -m3 -iE 'error|cannot|undefined' "$TMP/build" | tr '\n' ' ' | head -c 400)"
        return 1
    fi
}

# run_test TRIPLE CPU PROGRAM: one cross-built test program under qemu on CPU.
run_test() {
    qemu="$(mkvar "$1" QEMU) -cpu $2"
    $qemu "build/$1/tests/$3" >"$TMP/k" 2>&1
    st=$?
    n_ok=$(grep -c '^ok - ' "$TMP/k")
    n_bad=$(grep -c '^not ok - ' "$TMP/k")
    if [ "$st" -eq 0 ] && [ "$n_bad" -eq 0 ] && [ "$n_ok" -gt 0 ]; then
        ok "$1 on $2: $3: $n_ok checks pass"
    else
        not_ok "$1 on $2: $3: status $st, $n_bad failed: $(grep -m5 '^not ok' "$TMP/k" | tr '\n' '|')"
    fi
}

field() { awk -F'\t' -v c="$1" -v k="$2" '$1 == c { print $k }' "$FIX/cases.tsv"; }

# path TRIPLE CPU EXPECTED-SET CASES...
path() {
    t=$1 cpu=$2 want=$3
    shift 3
    qemu="$(mkvar "$t" QEMU) -cpu $cpu"
    d=build/$t
    [ -x "$d/tests/test_kernels" ] || { not_ok "$t on $cpu: not built"; return; }
    run_test "$t" "$cpu" test_kernels
    active=$(sed -n 's/^# active kernels: \(.*\) ([0-9]* fast set.*/\1/p' "$TMP/k")
    run_test "$t" "$cpu" test_kernels_rows
    run_test "$t" "$cpu" test_kernels_attention
    if [ "$active" = "$want" ]; then ok "$t on $cpu: kernel set chosen: $active"
    else not_ok "$t on $cpu: kernel set chosen: '$active', want '$want'"; fi
    logits "$t" "$cpu" "" "$@"
}

# logits TRIPLE CPU "PITH OPTIONS" CASES...: pith logits of each case against llama.cpp's
logits() {
    t=$1 cpu=$2 opts=$3
    shift 3
    qemu="$(mkvar "$t" QEMU) -cpu $cpu"
    for c in "$@"; do
        rm -f "$TMP/l.f32"
        # shellcheck disable=SC2086 # opts: words
        if $qemu "build/$t/pith" logits "$M/$(field "$c" 2)" --prompt-ids "$(field "$c" 4)" --out "$TMP/l.f32" \
            --kv-type f32 -t 2 $opts >/dev/null 2>"$TMP/err" && "$CMP" "$c" "$TMP/l.f32" >"$TMP/cmp" 2>&1; then
            ok "$t on $cpu${opts:+ ($opts)}: $(cat "$TMP/cmp")"
        else not_ok "$t on $cpu${opts:+ ($opts)}: logits $c: $(head -c 200 "$TMP/err") $(cat "$TMP/cmp" 2>/dev/null)"; fi
    done
}

# plan_mode TRIPLE CPU MODEL MODE: the planner's load mode on that CPU (the
# dotprod set reads Q8_0/Q4_0 models repacked, so it reads them rather than
# mapping them; every other set and type maps)
plan_mode() {
    qemu="$(mkvar "$1" QEMU) -cpu $2"
    got=$($qemu "build/$1/pith" run "$M/$3" -p hi --plan 2>&1 | sed -n 's/^memory plan for .*: --load \([a-z]*\),.*/\1/p')
    if [ "$got" = "$4" ]; then ok "$1 on $2: $3: the planner chooses --load $4"
    else not_ok "$1 on $2: $3: the planner chose '$got', want $4"; fi
}

# side_plan TRIPLE CPU MODEL: --load mmap's plan holds the scales' copy the
# dotprod set reads mapped Q8_0/Q4_0 matrices with (kernels.h: KERN_SIDE_ROWS)
side_plan() {
    qemu="$(mkvar "$1" QEMU) -cpu $2"
    got=$($qemu "build/$1/pith" run "$M/$3" -p hi --load mmap --plan 2>&1 | grep -c '^  weight scales (copied from the mapped file) ')
    if [ "$got" = 1 ]; then ok "$1 on $2: $3: --load mmap plans the scales' copy"
    else not_ok "$1 on $2: $3: --load mmap's plan has no line 'weight scales (copied from the mapped file)'"; fi
}

CASES="pub_tq3_Q8_0_logits_r05 pub_tq3_Q4_0_logits_r05 pub_tq3_Q4_K_M_logits_r05 pub_tq3_Q6_K_logits_r05
       pub_tq3_untied_f16_logits_r05"

# One part per emulated CPU, and the forward pass on the A76 (the longest)
# on its own: tests/run.sh runs them side by side.
if part a53 && build aarch64-linux-musl; then
    path aarch64-linux-musl cortex-a53 "aarch64 NEON" $CASES
    plan_mode aarch64-linux-musl cortex-a53 tiny-qwen3-Q8_0.gguf mmap
fi
if part a76 && build aarch64-linux-musl; then
    path aarch64-linux-musl cortex-a76 "aarch64 NEON+dotprod+fp16" $CASES
    plan_mode aarch64-linux-musl cortex-a76 tiny-qwen3-Q8_0.gguf read
    plan_mode aarch64-linux-musl cortex-a76 tiny-qwen3-Q4_0.gguf read
    plan_mode aarch64-linux-musl cortex-a76 tiny-qwen3-Q4_K_M.gguf mmap
    side_plan aarch64-linux-musl cortex-a76 tiny-qwen3-Q8_0.gguf
    # mapped, with the scales' copy (the one-token kernels read it)
    logits aarch64-linux-musl cortex-a76 "--load mmap" pub_tq3_Q8_0_logits_r05 pub_tq3_Q4_0_logits_r05
fi
if part max && build aarch64-linux-musl; then
    path aarch64-linux-musl max "aarch64 NEON+dotprod+i8mm+fp16" $CASES
    plan_mode aarch64-linux-musl max tiny-qwen3-Q4_0.gguf read
    logits aarch64-linux-musl max "--load mmap" pub_tq3_Q8_0_logits_r05 pub_tq3_Q4_0_logits_r05
fi
if part a7 && build armv7-linux-musleabihf; then
    path armv7-linux-musleabihf cortex-a7 "armv7 NEON" $CASES
fi
if part arm1176 && build armv6-linux-musleabi; then
    path armv6-linux-musleabi arm1176 "reference C" pub_tq3_Q8_0_logits_r05
fi
finish

#!/bin/sh
# t_arm_kernels.sh - the NEON kernels (src/kernels/kernels_arm.c) under qemu-user.
#
# tests/test_kernels.c and tests/test_kernels_rows.c (the multi-row kernels,
# kernels_arm_rows.c, kernels_arm_kq.c: results and determinism), and on the A76 the whole
# forward pass (tests/test_forward.c), cross-built statically for
# aarch64 and armv7, run on an emulated CPU for each ARM code path, which
# must be the one chosen:
#   aarch64 on Cortex-A53 (no dotprod: Pi 3, 4, Zero 2 W)  -> "aarch64 NEON"
#   aarch64 on Cortex-A76 (dotprod, fp16: Pi 5)             -> "aarch64 NEON+dotprod+fp16"
#   armv7 on Cortex-A7 (32-bit OS)                          -> "armv7 NEON"
#   armv6 on ARM1176 (no NEON: Pi 1, Zero)                  -> "reference C"
# then `pith logits` of that build on fixture models of each quantized
# kernel family (Q8_0, Q4_0, Q4_K_M = Q4_K + Q6_K) and F16 on the same CPU,
# compared with llama.cpp's logits by cmplogits (README section 6
# tolerances). About 2 minutes; needs the cross compilers and qemu-user-static
# (toolchains/install-debian.sh).
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
CMP=${CMP:-build/asan/tools/cmplogits}
M=$FIX/models
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
WARN="-std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes"

[ -x "$CMP" ] || make -s "$CMP" >"$TMP/build" 2>&1 || not_ok "build $CMP: $(grep -m3 -i error "$TMP/build" | tr '\n' ' ')"

mkvar() { make -s --no-print-directory TARGET="$1" "print-$2"; }

# build TRIPLE: build/TRIPLE/pith and build/TRIPLE/tests/test_kernels (the
# library objects are the pith build's, from the Makefile's cross rules).
build() {
    t=$1 d=build/$1
    cc=$(mkvar "$t" CROSS_CC)
    if ! command -v "$cc" >/dev/null 2>&1; then not_ok "$t: no $cc (toolchains/install-debian.sh)"; return 1; fi
    objs=
    for s in $(mkvar "$t" CORE_SRC) $(mkvar "$t" PORT_SRC); do
        [ "$s" = port/main.c ] || objs="$objs $d/${s%.c}.o"
    done
    # the test and the non-main tools (fixtures reader), as the Makefile links them
    tobjs=
    for s in tests/test_kernels.c tests/test_kernels_rows.c tests/test_forward.c tests/tools/*.c; do
        case $s in tests/tools/main_*) continue ;; esac
        tobjs="$tobjs $d/${s%.c}.o"
    done
    mkdir -p "$d/tests/tools"
    # shellcheck disable=SC2086
    built=0
    if make -s -j"$JOBS" TARGET="$t" $objs "$d/pith" >"$TMP/build" 2>&1; then
        built=1
        for o in $tobjs; do
            s=${o#"$d/"}
            $cc $WARN -O2 -g -fno-strict-aliasing $(mkvar "$t" TARGET_CFLAGS) -D_GNU_SOURCE \
                -c "${s%.o}.c" -o "$o" >>"$TMP/build" 2>&1 || { built=0; break; }
        done
    fi
    # shellcheck disable=SC2086
    lobjs=
    for o in $tobjs; do case $o in */tests/test_*.o) ;; *) lobjs="$lobjs $o" ;; esac; done
    # shellcheck disable=SC2086
    if [ $built -eq 1 ] && $cc $(mkvar "$t" TARGET_CFLAGS) $(mkvar "$t" OMPFLAGS) $(mkvar "$t" TARGET_LDFLAGS) \
        -o "$d/tests/test_kernels" "$d/tests/test_kernels.o" $lobjs $objs -lm >>"$TMP/build" 2>&1 &&
        $cc $(mkvar "$t" TARGET_CFLAGS) $(mkvar "$t" OMPFLAGS) $(mkvar "$t" TARGET_LDFLAGS) \
        -o "$d/tests/test_kernels_rows" "$d/tests/test_kernels_rows.o" $lobjs $objs -lm >>"$TMP/build" 2>&1 &&
        $cc $(mkvar "$t" TARGET_CFLAGS) $(mkvar "$t" OMPFLAGS) $(mkvar "$t" TARGET_LDFLAGS) \
        -o "$d/tests/test_forward" "$d/tests/test_forward.o" $lobjs $objs -lm >>"$TMP/build" 2>&1; then
        ok "$t: pith, test_kernels, test_kernels_rows and test_forward built"
    else
        not_ok "$t: build: $(grep -m3 -iE 'error|cannot|undefined' "$TMP/build" | tr '\n' ' ' | head -c 400)"
        return 1
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
    $qemu "$d/tests/test_kernels" >"$TMP/kt" 2>&1
    st=$?
    n_ok=$(grep -c '^ok - ' "$TMP/kt")
    n_bad=$(grep -c '^not ok - ' "$TMP/kt")
    active=$(sed -n 's/^# active kernels: \(.*\) ([0-9]* fast set.*/\1/p' "$TMP/kt")
    if [ "$st" -eq 0 ] && [ "$n_bad" -eq 0 ] && [ "$n_ok" -gt 0 ]; then
        ok "$t on $cpu: test_kernels: $n_ok checks pass"
    else
        not_ok "$t on $cpu: test_kernels: status $st, $n_bad failed: $(grep -m5 '^not ok' "$TMP/kt" | tr '\n' '|')"
    fi
    $qemu "$d/tests/test_kernels_rows" >"$TMP/kr" 2>&1
    st=$?
    n_ok=$(grep -c '^ok - ' "$TMP/kr")
    n_bad=$(grep -c '^not ok - ' "$TMP/kr")
    if [ "$st" -eq 0 ] && [ "$n_bad" -eq 0 ] && [ "$n_ok" -gt 0 ]; then
        ok "$t on $cpu: test_kernels_rows: $n_ok checks pass"
    else
        not_ok "$t on $cpu: test_kernels_rows: status $st, $n_bad failed: $(grep -m5 '^not ok' "$TMP/kr" | tr '\n' '|')"
    fi
    # the whole forward pass on the dotprod path (its multi-row kernels): chunked
    # prompts, token by token, threads (about a minute under qemu)
    if [ "$cpu" = cortex-a76 ]; then
        $qemu "$d/tests/test_forward" >"$TMP/kf" 2>&1
        st=$?
        n_ok=$(grep -c '^ok - ' "$TMP/kf")
        n_bad=$(grep -c '^not ok - ' "$TMP/kf")
        if [ "$st" -eq 0 ] && [ "$n_bad" -eq 0 ] && [ "$n_ok" -gt 0 ]; then ok "$t on $cpu: test_forward: $n_ok checks pass"
        else not_ok "$t on $cpu: test_forward: status $st, $n_bad failed: $(grep -m5 '^not ok' "$TMP/kf" | tr '\n' '|')"; fi
    fi
    if [ "$active" = "$want" ]; then ok "$t on $cpu: kernel set chosen: $active"
    else not_ok "$t on $cpu: kernel set chosen: '$active', want '$want'"; fi
    for c in "$@"; do
        rm -f "$TMP/l.f32"
        if $qemu "$d/pith" logits "$M/$(field "$c" 2)" --prompt-ids "$(field "$c" 4)" --out "$TMP/l.f32" \
            --kv-type f32 -t 2 >/dev/null 2>"$TMP/err" && "$CMP" "$c" "$TMP/l.f32" >"$TMP/cmp" 2>&1; then
            ok "$t on $cpu: $(cat "$TMP/cmp")"
        else not_ok "$t on $cpu: logits $c: $(head -c 200 "$TMP/err") $(cat "$TMP/cmp" 2>/dev/null)"; fi
    done
}

CASES="pub_tq3_Q8_0_logits_r05 pub_tq3_Q4_0_logits_r05 pub_tq3_Q4_K_M_logits_r05 pub_tq3_Q6_K_logits_r05
       pub_tq3_untied_f16_logits_r05"

if build aarch64-linux-musl; then
    path aarch64-linux-musl cortex-a53 "aarch64 NEON" $CASES
    path aarch64-linux-musl cortex-a76 "aarch64 NEON+dotprod+fp16" $CASES
fi
if build armv7-linux-musleabihf; then
    path armv7-linux-musleabihf cortex-a7 "armv7 NEON" $CASES
fi
if build armv6-linux-musleabi; then
    path armv6-linux-musleabi arm1176 "reference C" pub_tq3_Q8_0_logits_r05
fi
finish

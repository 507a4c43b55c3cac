#!/bin/sh
# bench_arm.sh - instructions per prompt token and per generated token of the
# aarch64 build under qemu's Pi 5 (cortex-a76: dotprod, fp16) and Pi 4
# (cortex-a72) CPU models, counted by armcount (../shared/tools/armcount:
# run its setup.sh once, as root), next to llama.cpp's counts for the same
# files (from armcount's README: the node-llama-cpp 3.22.1 llama.cpp, commit
# de3ff81, cross-built for aarch64, llama-bench -t 1).
#
# The models: Qwen3 shapes at Qwen3-0.6B widths with 4 layers (85.2 M
# weights), written by mkmodel into build/armbench/. Instruction counts are
# exact and reproducible (timings under qemu mean nothing).
#
#   sh tests/bench_arm.sh                     every type on both CPUs (~20 min)
#   TYPES="q8_0 q4_0" CPUS=cortex-a76 sh tests/bench_arm.sh
#   CPUS=max ...          qemu's max CPU: dotprod, fp16 and i8mm (the SMMLA prompt
#                         tiles of kernels_arm_mm.c; newer boards than the Pi 5);
#                         llama.cpp's column: the same source built with i8mm
#   CPUS=cortex-a53 ...   the Pi 3 / Zero 2 W: the same kernels as cortex-a72 (the
#                         set without dotprod), so the same counts; llama.cpp's
#                         column shows - there
#   LOADS="mmap read"     pith's load modes, a column each (default both): with
#                         --load read the A76 set repacks Q8_0 and Q4_0 weights
#                         in place (docs/performance-arm.md); mmap keeps the file's layout
set -eu
cd "$(dirname "$0")/.."
AC=${ARMCOUNT:-../shared/tools/armcount}
TYPES=${TYPES:-q8_0 q4_0 f16 q4_k_m}
CPUS=${CPUS:-cortex-a76 cortex-a72}
LOADS=${LOADS:-mmap read}
BIN=${BIN:-build/aarch64-linux-musl/pith}   # another build to compare: BIN=... (built beforehand)
D=build/armbench
[ -f "${ARMCOUNT_DIR:-$HOME/.cache/armcount}/libicount.so" ] || { echo "bench_arm: run sh $AC/setup.sh first (root)" >&2; exit 2; }
make -s -j2 TARGET=aarch64-linux-musl build/aarch64-linux-musl/pith build/rel/tools/mkmodel >/dev/null
mkdir -p "$D"
for t in $TYPES; do
    [ -f "$D/m-$t.gguf" ] || build/rel/tools/mkmodel "$D/m-$t.gguf" --layers 4 --embd 1024 --ff 3072 --heads 16 \
        --kv-heads 8 --head-dim 128 --vocab 21760 --ctx 4096 --tied --seed 1 --type "$t" >/dev/null
done
# llama.cpp's millions of instructions per token (armcount/README.md; q4_k_m: docs/performance-arm.md): pp tg
llama() {
    case "$1 $2" in
    "q8_0 cortex-a76") echo "8.97 19.04" ;; "q4_0 cortex-a76") echo "8.68 24.37" ;;
    "f16 cortex-a76") echo "25.17 38.22" ;; "q8_0 cortex-a72") echo "47.81 74.81" ;;
    "q4_0 cortex-a72") echo "52.87 82.80" ;; "f16 cortex-a72") echo "43.54 112.73" ;;
    "q4_k_m cortex-a76") echo "16.48 41.20" ;; # docs/performance-arm.md: cross-built here from the same source, 2026-11-27
    "q4_k_m cortex-a72") echo "52.57 85.65" ;; # the same, armv8-a
    "q8_0 max") echo "8.69 26.36" ;; "q4_0 max") echo "7.44 29.03" ;; # the same, armv8.2-a+dotprod+fp16+i8mm, 2026-11-28
    "q4_k_m max") echo "14.04 47.30" ;;
    *) echo "- -" ;;
    esac
}
count() { sh "$AC/pertoken.sh" "$1" "$2" "$BIN" bench "$3" -t 1 --load "$4" | sed -n 's/^total \([0-9.]*\) M.*/\1/p'; }
ratio() { case "$2" in -) echo - ;; *) awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' ;; esac; }
echo "millions of instructions per token, 1 thread: $BIN ($(git rev-parse --short HEAD 2>/dev/null || echo "?")); pith per load mode (--load), then its ratio to llama.cpp"
head="| type | cpu |" rule="|---|---|"
for what in prompt gen; do
    for l in $LOADS; do head="$head pith $what $l |" rule="$rule---:|"; done
    head="$head llama.cpp $what |" rule="$rule---:|"
    for l in $LOADS; do head="$head $l / llama.cpp |" rule="$rule---:|"; done
done
echo "$head"
echo "$rule"
for t in $TYPES; do
    for c in $CPUS; do
        set -- $(llama "$t" "$c")
        line="| $t | $c |"
        for m in pp tg; do
            if [ $m = pp ]; then ll=$1; else ll=$2; fi
            ratios=
            for l in $LOADS; do
                v=$(count "$c" $m "$D/m-$t.gguf" "$l")
                line="$line $v |" ratios="$ratios $(ratio "$v" "$ll") |"
            done
            line="$line $ll |$ratios"
        done
        echo "$line"
    done
done

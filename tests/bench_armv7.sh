#!/bin/sh
# bench_armv7.sh - instructions per prompt token and per generated token of
# the armv7 build (32-bit Pi OS) under qemu-arm's Cortex-A7 model, counted
# with armcount's plugin (../shared/tools/armcount: run its setup.sh once, as
# root) loaded into the qemu-arm that setup.sh unpacks beside qemu-aarch64.
# armcount's classes decode AArch64 encodings only: for armv7 the total and
# the per-mnemonic counts are right, the class split is not printed.
#
# The models are bench_arm.sh's (build/armbench/, written if missing). As
# armcount's pertoken.sh: runs with -r 1 and -r 2, the difference divided by
# the tokens (pp: -p 64 -n 0, tg: -p 0 -n 16 unless PP, TG say), -t 1.
#
#   sh tests/bench_armv7.sh                       every type, this tree's build
#   BIN=old/pith TYPES=q8_0 sh tests/bench_armv7.sh   another build (made beforehand)
#   MNEM=1 ...                                    also the 25 commonest mnemonics per generated token
#   PP=16 TG=4 ...                                fewer tokens per run (default 64 and 16)
set -eu
cd "$(dirname "$0")/.."
D=${ARMCOUNT_DIR:-$HOME/.cache/armcount}
TYPES=${TYPES:-q8_0 q4_0 f16 q4_k_m}
CPU=${CPU:-cortex-a7}
BIN=${BIN:-build/armv7-linux-musleabihf/pith}
PP=${PP:-64} TG=${TG:-16}   # tokens per run (fewer: quicker, F16's float is slow under qemu)
Q="$D/qemu/usr/bin/qemu-arm"
[ -f "$D/libicount.so" ] && [ -x "$Q" ] || { echo "bench_armv7: run sh ../shared/tools/armcount/setup.sh first (root)" >&2; exit 2; }
if [ "$BIN" = build/armv7-linux-musleabihf/pith ]; then
    make -s -j2 TARGET=armv7-linux-musleabihf build/armv7-linux-musleabihf/pith >/dev/null
fi
make -s -j2 build/rel/tools/mkmodel >/dev/null
M=build/armbench
mkdir -p "$M"
for t in $TYPES; do
    [ -f "$M/m-$t.gguf" ] || build/rel/tools/mkmodel "$M/m-$t.gguf" --layers 4 --embd 1024 --ff 3072 --heads 16 \
        --kv-heads 8 --head-dim 128 --vocab 21760 --ctx 4096 --tied --seed 1 --type "$t" >/dev/null
done
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
# run MODEL R ARGS... -> the plugin's report in $TMPD/rR
run() {
    m=$1 r=$2
    shift 2
    "$Q" -cpu "$CPU" -plugin "$D/libicount.so,out=$TMPD/r$r" "$BIN" bench "$m" -t 1 "$@" -r "$r" >/dev/null 2>"$TMPD/err" ||
        { echo "bench_armv7: $BIN failed: $(tail -n 3 "$TMPD/err")" >&2; exit 1; }
}
# pertoken MODEL pp|tg -> millions per token (and the mnemonics if MNEM=1)
pertoken() {
    case $2 in pp) set -- "$1" "$PP" -p "$PP" -n 0 ;; *) set -- "$1" "$TG" -p 0 -n "$TG" ;; esac
    m=$1 n=$2
    shift 2
    run "$m" 1 "$@"
    run "$m" 2 "$@"
    awk -v n="$n" '$1 == "total" { v[FILENAME] = $2 } END { printf "%.2f\n", (v[ARGV[2]] - v[ARGV[1]]) / n / 1e6 }' \
        "$TMPD/r1" "$TMPD/r2"
}
echo "millions of instructions per token, 1 thread, qemu-arm -cpu $CPU: $BIN"
echo "| type | prompt | gen |"
echo "|---|---:|---:|"
for t in $TYPES; do
    pp=$(pertoken "$M/m-$t.gguf" pp)
    tg=$(pertoken "$M/m-$t.gguf" tg)
    echo "| $t | $pp | $tg |"
    if [ -n "${MNEM:-}" ]; then
        awk -v tg="$TG" '$1 == "mnem" { if (FILENAME == ARGV[1]) a[$2] = $3; else b[$2] = $3 }
             END { for (k in b) printf "  %-14s %8.3f M\n", k, (b[k] - a[k]) / tg / 1e6 }' "$TMPD/r1" "$TMPD/r2" |
            sort -k2 -n -r | head -n 25
    fi
done

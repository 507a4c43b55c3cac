#!/bin/sh
# ab_bench.sh OLD_PITH NEW_PITH [MODEL...] - a developer tool (not part of
# `make test`): the speed of two pith binaries on the same models. Runs
#     pith bench MODEL -p 64 -n 32 -r 3 -t 2
# back to back, old, new, old, new (so a drift of the machine hits both),
# and prints a table of prompt (pp64) and generation (tg32) tokens/s for
# each run, the mean of each binary and new/old, with the CPU's name.
# No assertion on time: it only reports (exit status 1 when a run fails).
#
# Default models: build/bench-qwen3-0.6b-q8_0.gguf and -q4_0.gguf (random
# weights, Qwen3-0.6B shapes), written by
#     make build/bench-qwen3-0.6b-q8_0.gguf build/bench-qwen3-0.6b-q4_0.gguf
# Environment: AB_BENCH_ARGS replaces "-p 64 -n 32 -r 3 -t 2".
usage() { echo "usage: $0 OLD_PITH NEW_PITH [MODEL...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
OLD=$1 NEW=$2
shift 2
for b in "$OLD" "$NEW"; do
    [ -x "$b" ] || { echo "$0: $b: not an executable" >&2; exit 2; }
done
[ $# -eq 0 ] && set -- build/bench-qwen3-0.6b-q8_0.gguf build/bench-qwen3-0.6b-q4_0.gguf
for m in "$@"; do
    [ -f "$m" ] || { echo "$0: $m: no such model (make $m)" >&2; exit 2; }
done
ARGS=${AB_BENCH_ARGS:--p 64 -n 32 -r 3 -t 2}
TMP=${TMPDIR:-/tmp}/pith-ab-bench-$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
echo "cpu: ${cpu:-unknown} ($(nproc) CPUs online)"
echo "old: $OLD"
echo "new: $NEW"
echo "pith bench MODEL $ARGS; order: old, new, old, new"
status=0
# rate FILE TEST: the mean tokens/s of a row (pp..., tg...) of pith bench's table.
rate() { awk -v t="$2" -F'|' '$2 ~ "^ *" t "[0-9]+ *$" { split($3, a, " "); print a[1]; exit }' "$1"; }
# mean SIDE TEST: the mean of rate over the two runs of one binary.
mean() { for r in 1 2; do rate "$TMP/$1.$r" "$2"; done | awk '{ s += $1; n++ } END { if (n) printf "%.2f", s / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b != "") printf "%.3f", b / a; else print "-" }'; }
for m in "$@"; do
    echo
    echo "model: $m"
    printf '| %-4s | %-4s | %14s | %14s |\n' run pith "prompt tok/s" "gen tok/s"
    printf '|------|------|----------------|----------------|\n'
    for run in 1 2; do
        for side in old new; do
            bin=$OLD
            [ $side = new ] && bin=$NEW
            out=$TMP/$side.$run
            # shellcheck disable=SC2086
            if ! "$bin" bench "$m" $ARGS >"$out" 2>"$out.err"; then
                echo "$0: $bin bench $m failed: $(tail -n 1 "$out.err")" >&2
                status=1
            fi
            printf '| %-4s | %-4s | %14s | %14s |\n' "$run" $side "$(rate "$out" pp)" "$(rate "$out" tg)"
        done
    done
    # Means of the two runs of each binary, and new/old.
    pp_old=$(mean old pp) tg_old=$(mean old tg) pp_new=$(mean new pp) tg_new=$(mean new tg)
    printf '| %-4s | %-4s | %14s | %14s |\n' mean old "$pp_old" "$tg_old"
    printf '| %-4s | %-4s | %14s | %14s |\n' mean new "$pp_new" "$tg_new"
    printf '| %-11s | %14s | %14s |\n' "new / old" "$(ratio "$pp_old" "$pp_new")" "$(ratio "$tg_old" "$tg_new")"
done
exit $status

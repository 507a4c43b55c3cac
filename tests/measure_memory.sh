#!/bin/sh
# measure_memory.sh MODEL... - the memory table of docs/memory.md (a few rows in README.md) (not a test: it
# asserts nothing). For each model, at contexts 512 and 4096: `pith run`
# with --load mmap, read and stream (the smallest window), then with
# --mem 256M and 512M and the planner's own choice, each of those inside a
# memory cgroup capped at the same size, so that the page cache counts too
# (needs root and cgroup v1's memory controller). Prints a Markdown table:
# the context the planner kept, the compute threads, the resident total
# planned (an upper bound: KV cache pages count once positions fill), the
# peak RSS pith reports (VmHWM), the cgroup's peak usage (page cache
# included), generation tokens/s.
#   sh tests/measure_memory.sh build/bench-qwen3-0.6b-q8_0.gguf build/bench-qwen3-0.6b-q4_0.gguf
# Environment: P (default ./pith), N generated tokens (default 32).
P=${P:-./pith}
N=${N:-32}
ERR=${TMPDIR:-/tmp}/pith-measure-$$.err
trap 'rm -f "$ERR"' EXIT
echo "load average before: $(cat /proc/loadavg)"
echo "| model | context | mode | --mem (= cgroup cap) | context used | threads | planned MiB | peak RSS MiB | cgroup peak MiB | generation tok/s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in "$@"; do
    name=$(basename "$m" .gguf)
    for c in 512 4096; do
        for spec in mmap: read: stream: planner:256M planner:512M; do
            mode=${spec%%:*}; mem=${spec#*:}
            dd if="$m" iflag=nocache count=0 2>/dev/null # start without its pages in the cache
            load="--load $mode"; [ "$mode" = planner ] && load=
            set -- run "$m" -p "Tell me a story" -n "$N" --ignore-eos -c "$c" --seed 1 $load
            cg_peak=-
            if [ -n "$mem" ]; then
                cg=/sys/fs/cgroup/memory/pith-measure-$$
                mkdir "$cg" && numfmt --from=iec "$mem" >"$cg/memory.limit_in_bytes" || exit 1
                sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$P" "$@" --mem "$mem" >/dev/null 2>"$ERR"
                st=$?
                cg_peak=$(awk '{ printf "%.1f", $1 / 1048576 }' "$cg/memory.max_usage_in_bytes")
                rmdir "$cg"
            else
                "$P" "$@" >/dev/null 2>"$ERR"
                st=$?
                mem=-
            fi
            if [ $st -ne 0 ]; then echo "| $name | $c | $mode | $mem | failed: $(tail -1 "$ERR") |"; continue; fi
            got=$(sed -n 's/^load: .*(--load \([a-z]*\)).*/\1/p' "$ERR")
            [ "$mode" = planner ] && mode="planner: $got"
            used=$(sed -n 's/^load: .*, context \([0-9]*\), .*/\1/p' "$ERR")
            threads=$(sed -n 's/^load: .*, \([0-9]*\) threads*; .*/\1/p' "$ERR")
            planned=$(sed -n 's/^load: .*; planned \([0-9.]*\) MiB resident.*/\1/p' "$ERR")
            rss=$(sed -n 's/^generation: .*; peak RSS \([0-9.]*\) MiB.*/\1/p' "$ERR")
            tps=$(sed -n 's/^generation: .*(\([0-9.]*\) tokens\/s).*/\1/p' "$ERR")
            echo "| $name | $c | $mode | $mem | $used | $threads | $planned | $rss | $cg_peak | $tps |"
        done
    done
done
echo "load average after: $(cat /proc/loadavg)"

#!/bin/sh
# Runs every test program (build/asan/tests/test_*) and script (tests/t_*.sh),
# PITH_TEST_JOBS at a time (default: the online cores + 1), the longest first
# (the times of the last run, build/test-times.tsv), counts their
# "ok"/"not ok" lines and prints the total as the last line, with the time.
#
#   sh tests/run.sh [TEST...]        (default: every test)
#
# Each test's output goes to build/test-logs/NAME.log; build/test.log has
# them all, in name order, whatever order they ran in. Each test's line gives
# its wall time and its CPU time (user + system of every process it waited
# for); the last line the sum of the CPU times.
#
# A script with a line "# parts: A B ..." is run as one job per part
# (TEST@A, TEST@B, ...: PITH_TEST_PART=A sh TEST), so that one long script
# does not bound the wall time; `sh TEST` alone runs every part (lib.sh's
# part()). TEST@A on the command line runs that part only.
cd "$(dirname "$0")/.." || exit 1
export OMP_WAIT_POLICY=passive
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The harnesses share the cores with the other tests: one at a time, each
# for FUZZ_SECONDS (2 by default, tests/ci/t_fuzz.sh).
export FUZZ_JOBS=${FUZZ_JOBS:-1}
# One job more than the cores: a job waiting (on the disk with its cache
# dropped, a server starting, a lock) would otherwise leave its core idle;
# in a quiet run on 2 cores the jobs' CPU was 666 s in 360 s, 1.85 cores.
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
jobs=${PITH_TEST_JOBS:-$((cores + 1))}
log=build/test.log
logs=build/test-logs
times=build/test-times.tsv
mkdir -p "$logs"
start=$(date +%s)

if [ $# -gt 0 ]; then tests="$*"
else
    tests=
    for t in build/asan/tests/test_* tests/t_*.sh; do
        [ -e "$t" ] || continue
        case "$t" in *.o|*.d) continue ;; esac
        tests="$tests $t"
    done
fi
# Scripts split into parts: one entry per part.
expanded=
for t in $tests; do
    parts=
    case "$t" in *.sh) parts=$(sed -n 's/^# parts: //p' "$t" 2>/dev/null | head -1) ;; esac
    if [ -n "$parts" ]; then for p in $parts; do expanded="$expanded $t@$p"; done
    else expanded="$expanded $t"; fi
done
tests=$expanded
# Longest first: last run's seconds, else (a fresh clone) the CPU seconds
# measured on a fresh clone (Zen 5 CI machine, 2026-11-29), so that no long
# job starts last and runs alone at the end. (t_grammar, t_load_modes,
# t_serve_slots, t_tools_formats, t_kv_q8_0 and t_inspect: scaled by what
# their cuts of 2026-11-29 saved on the shared 2-core machine.)
order=$(for t in $tests; do
    s=$(awk -F'\t' -v t="$t" '$1 == t { s = $2 } END { print s + 0 }' "$times" 2>/dev/null)
    [ "${s:-0}" -gt 0 ] || case "$t" in
        *t_llamacpp_arch.sh|*t_arm_kernels.sh@a76|*t_fuzz.sh) s=60 ;;
        *t_grammar.sh|*t_arm_kernels.sh@a7) s=45 ;;
        *t_arm_kernels.sh@arm1176) s=39 ;;
        *t_load_modes.sh) s=38 ;;
        *t_serve_slots.sh) s=27 ;;
        *t_serve_load.sh|*t_tokenize_bpe.sh|*t_static.sh) s=25 ;;
        *t_tools_formats.sh|*t_tokenize_gemma3.sh|*t_arm_kernels.sh*|*t_tokenize_vocab.sh@names) s=18 ;;
        *t_inspect.sh|*t_kv_q8_0.sh|*t_llamacpp_gemma4.sh|*t_spec.sh) s=11 ;;
        *t_serve_slot_files.sh) s=8 ;;
        *t_llamacpp_long.sh|*test_spec) s=5 ;;
        *t_tokenize_gemma4.sh|*t_tokenize_vocab.sh@vectors|*t_llamacpp_moe.sh) s=14 ;;
        *test_forward|*t_robust.sh|*t_memory.sh|*t_serve.sh|*test_gguf|*t_prompt_cache.sh) s=11 ;;
        *t_tokenize_wpm.sh) s=7 ;;
        *t_soak.sh|*t_tokenize.sh|*t_run.sh|*test_sampler|*test_weight_stream|*t_options.sh|*t_layout.sh|*t_install.sh) s=5 ;;
        *) s=1 ;;
    esac
    printf '%s\t%s\n' "$s" "$t"
done | sort -rn -k1,1 | cut -f2)

# One test: its log, then "NAME STATUS SECONDS" into its .done file.
run_one() {
    t=$1
    name=$(echo "$t" | tr / _)
    t0=$(date +%s)
    # in a subshell, so that `times` gives this test's CPU time alone (user
    # and system, of every process it waited for)
    (
        case "$t" in
            *.sh@*) PITH_TEST_PART=${t##*@} sh "${t%@*}" >"$logs/$name.log" 2>&1 ;;
            *.sh) sh "$t" >"$logs/$name.log" 2>&1 ;;
            *) "$t" >"$logs/$name.log" 2>&1 ;;
        esac
        st=$?
        times >"$logs/$name.cpu"
        exit $st
    )
    st=$?
    cpu=$(sed -n 2p "$logs/$name.cpu" | tr 'ms' '  ' |
        awk '{ printf "%.1f", $1 * 60 + $2 + $3 * 60 + $4 }')
    echo "$t $st $(($(date +%s) - t0)) ${cpu:-0}" >"$logs/$name.done"
    grep '^not ok' "$logs/$name.log" | head -20
    echo "== $t: status $st, $(grep -c '^ok - ' "$logs/$name.log") ok, $(($(date +%s) - t0)) s, CPU ${cpu:-0} s"
}
export logs
rm -f "$logs"/*.done "$logs"/*.log
# xargs keeps `jobs` shells busy; each gets run_one from this file.
printf '%s\n' $order | xargs -P "$jobs" -n 1 sh -c "$(sed -n '/^run_one() {/,/^}/p' tests/run.sh)"'; run_one "$1"' sh

# Collect, in name order.
: >"$log"
status=0
: >"$times.new"
for t in $tests; do
    name=$(echo "$t" | tr / _)
    echo "== $t" >>"$log"
    cat "$logs/$name.log" >>"$log" 2>/dev/null
    if [ ! -f "$logs/$name.done" ]; then
        echo "not ok - $t did not finish" | tee -a "$log"
        status=1
        continue
    fi
    read -r _ st secs cpu <"$logs/$name.done"
    printf '%s\t%s\t%s\n' "$t" "$secs" "$cpu" >>"$times.new"
    # a test (or a part, e.g. a misspelt one) that checked nothing has not passed
    if ! grep -q '^ok - ' "$logs/$name.log"; then
        echo "not ok - $t reported no passing check" | tee -a "$log"
        status=1
    fi
    if [ "$st" -ne 0 ]; then
        status=1
        if ! grep -q '^not ok' "$logs/$name.log"; then
            echo "not ok - $t exited with status $st" | tee -a "$log"
            tail -20 "$logs/$name.log"
        fi
    fi
done
cpu_sum=$(awk -F'\t' '{ s += $3 } END { printf "%.0f", s }' "$times.new")
[ $# -gt 0 ] || mv "$times.new" "$times"
rm -f "$times.new"
passed=$(grep -c '^ok - ' "$log")
failed=$(grep -c '^not ok - ' "$log")
echo "full log: $log (each test: $logs/; seconds: $times)"
echo "$passed passed, $failed failed, $jobs at a time, $(($(date +%s) - start)) s (CPU $cpu_sum s)"
[ "$failed" -eq 0 ] && [ $status -eq 0 ]

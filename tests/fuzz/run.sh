#!/bin/sh
# Runs the libFuzzer harnesses (built by `make fuzz-build` into build/fuzz/):
# first every committed regression input of tests/fuzz/regress/NAME/ once,
# then each harness for SECONDS from its seeds (tests/fuzz/seeds/NAME/) and
# its growing corpus (build/fuzz/corpus/NAME/, never committed).
#
#   sh tests/fuzz/run.sh SECONDS [NAME...]      (from the repository root)
#
# Prints one "ok - ..." / "not ok - ..." line per harness, with the number
# of executions, and adds them to build/fuzz/executions.tsv (NAME, runs,
# seconds), the running total of clean executions. Logs go to
# build/fuzz/logs/run-PID/. A finding is written to
# build/fuzz/artifacts/NAME-crash-...: minimise it with
#   build/fuzz/fuzz_NAME -minimize_crash=1 -runs=10000 FILE
# then commit it under tests/fuzz/regress/NAME/ with the fix.
cd "$(dirname "$0")/../.." || exit 1
seconds=${1:-10}
shift
names=${*:-"gguf model tokenizer chat json cli grammar jinja"}
FIX=$(cd "${PITH_FIXTURES:-../shared/fixtures}" 2>/dev/null && pwd)
export PITH_FIXTURES=$FIX
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OMP_WAIT_POLICY=passive
jobs=${FUZZ_JOBS:-2}
# Logs per run: several `make test` may run at once in one tree.
logs=build/fuzz/logs/run-$$
mkdir -p build/fuzz/artifacts "$logs"
status=0

opts_for() {
    case $1 in
        gguf|model) echo "-max_len=65536" ;;
        tokenizer) echo "-max_len=4097" ;;
        cli) echo "-max_len=1024 -dict=$(pwd)/tests/fuzz/cli.dict" ;;
        jinja) echo "-max_len=32768 -dict=$(pwd)/tests/fuzz/jinja.dict" ;;
        *) echo "-max_len=8192" ;;
    esac
}
# fuzz_jinja also starts from the models' own templates when a clone of
# llama.cpp's sources is at hand (not committed: its files, its licence).
extra_seeds() {
    case $1 in
        chat|json) [ -d "$FIX/chat" ] && echo "$FIX/chat" ;;
        jinja)
            for d in "${PITH_JINJA_TEMPLATES:-}" build/llamacpp-src/models/templates; do
                [ -n "$d" ] && [ -d "$d" ] && { (cd "$d" && pwd); break; }
            done ;;
    esac
}

run_one() {
    name=$1
    bin=build/fuzz/fuzz_$name
    log=$logs/$name.log
    if [ ! -x "$bin" ]; then echo "not ok - fuzz $name: $bin is missing (make fuzz-build)"; return 1; fi
    : >"$log"
    if [ -d "tests/fuzz/regress/$name" ] && [ -n "$(ls "tests/fuzz/regress/$name")" ]; then
        n=$(ls "tests/fuzz/regress/$name" | wc -l)
        # shellcheck disable=SC2046
        if "$bin" $(opts_for "$name") "$(pwd)/tests/fuzz/regress/$name"/* >>"$log" 2>&1; then
            echo "ok - fuzz $name: $n regression inputs run clean"
        else
            echo "not ok - fuzz $name: a regression input fails (see $log)"; return 1
        fi
    fi
    mkdir -p "build/fuzz/corpus/$name"
    # Absolute paths: fuzz_cli changes into an empty directory.
    here=$(pwd)
    # shellcheck disable=SC2046
    "$bin" $(opts_for "$name") -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 \
        -artifact_prefix="$here/build/fuzz/artifacts/$name-" "$here/build/fuzz/corpus/$name" \
        "$here/tests/fuzz/seeds/$name" $(extra_seeds "$name") >>"$log" 2>&1
    st=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ $st -eq 0 ] && [ -n "$runs" ]; then
        printf '%s\t%s\t%s\n' "$name" "$runs" "$seconds" >>build/fuzz/executions.tsv
        total=$(awk -F'\t' -v n="$name" '$1 == n { s += $2 } END { print s + 0 }' build/fuzz/executions.tsv)
        echo "ok - fuzz $name: $runs executions in $seconds s clean ($total in total in build/fuzz/executions.tsv)"
    else
        echo "not ok - fuzz $name: exit status $st; $(grep -m1 -E 'ERROR|runtime error|property violated' "$log")"
        return 1
    fi
}

# A few harnesses at once (each is one process).
pids=
i=0
for name in $names; do
    run_one "$name" >"$logs/$name.result" &
    pids="$pids $!"
    i=$((i + 1))
    if [ $((i % jobs)) -eq 0 ]; then
        for p in $pids; do wait "$p" || status=1; done
        pids=
    fi
done
for p in $pids; do wait "$p" || status=1; done
for name in $names; do cat "$logs/$name.result"; done
exit $status

#!/bin/sh
# Runs every test program (build/asan/tests/test_*) and script (tests/t_*.sh),
# counts their "ok"/"not ok" lines and prints the total as the last line.
cd "$(dirname "$0")/.." || exit 1
export OMP_WAIT_POLICY=passive
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
log=build/test.log
: >"$log"
status=0
for t in build/asan/tests/test_* tests/t_*.sh; do
    [ -e "$t" ] || continue
    case "$t" in *.o|*.d) continue ;; esac
    echo "== $t" | tee -a "$log"
    case "$t" in
        *.sh) sh "$t" >"$log.one" 2>&1 ;;
        *) "$t" >"$log.one" 2>&1 ;;
    esac
    st=$?
    cat "$log.one" >>"$log"
    grep -E '^(not ok|ok) - ' "$log.one" | grep '^not ok' | head -20
    if [ $st -ne 0 ]; then
        status=1
        if ! grep -q '^not ok' "$log.one"; then
            echo "not ok - $t exited with status $st" | tee -a "$log"
            tail -20 "$log.one"
        fi
    fi
done
passed=$(grep -c '^ok - ' "$log")
failed=$(grep -c '^not ok - ' "$log")
echo "full log: $log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ $status -eq 0 ]

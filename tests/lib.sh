# lib.sh - sourced by the shell tests. Same line format as tests/check.h.
PITH=${PITH:-build/asan/pith}
FIX=${PITH_FIXTURES:-../shared/fixtures}
TMP=${TMPDIR:-/tmp}/pith-test-$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
export OMP_WAIT_POLICY=passive
failures=0

ok()     { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }
# check NAME COMMAND...: passes when the command succeeds.
check()  { name=$1; shift; if "$@" >"$TMP/out" 2>"$TMP/err"; then ok "$name"; else not_ok "$name: $(head -c 300 "$TMP/err")"; fi; }
# expect_fail2 NAME COMMAND...: passes when the command exits with status 2
# and prints exactly one line to stderr, starting with "pith: ".
expect_fail2() {
    name=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"; st=$?
    # the first line, and whether there is a second (whole lines, as wc -l
    # counts them), read by the shell: a wc and a grep per call were a
    # tenth of t_inspect.sh's CPU time
    lines=0 first=
    while [ $lines -lt 2 ] && IFS= read -r _line; do [ $lines -eq 0 ] && first=$_line; lines=$((lines + 1)); done <"$TMP/err"
    if [ "$st" -eq 2 ] && [ "$lines" -eq 1 ] && [ "${first#pith: }" != "$first" ]; then ok "$name"
    else not_ok "$name: status $st, $(wc -l <"$TMP/err") stderr lines: $(head -c 300 "$TMP/err")"; fi
}
# part NAME: whether to do part NAME of a script split into parts (its
# "# parts: ..." line): tests/run.sh runs each part as its own job with
# PITH_TEST_PART=NAME; run directly, a script does every part.
part() { [ -z "${PITH_TEST_PART:-}" ] || [ "$PITH_TEST_PART" = "$1" ]; }
# lock FILE ... unlock: what is between runs in one part at a time (the
# parts of a script running at once build what they share once).
lock() { mkdir -p "$(dirname "$1")"; exec 9>"$1"; flock 9; }
unlock() { flock -u 9; exec 9>&-; }
finish() { [ "$failures" -eq 0 ]; exit $?; }

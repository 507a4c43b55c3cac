# ab_lib.sh - what tests/ab_logits.sh and tests/ab_arch.sh share, sourced
# with the script's own arguments (OLD_PITH NEW_PITH): both binaries checked
# and made absolute, the checkout as the working directory, a scratch
# directory ($TMP), ok/not_ok and their counts ($passed, $failed), and ab.
usage() { echo "usage: $0 OLD_PITH NEW_PITH" >&2; exit 2; }
[ $# -eq 2 ] || usage
OLD=$1 NEW=$2
for b in "$OLD" "$NEW"; do
    [ -x "$b" ] || { echo "$0: $b: not an executable" >&2; exit 2; }
done
cd "$(dirname "$0")/.." || exit 2
case "$OLD" in /*) ;; *) [ -x "$OLDPWD/$OLD" ] && OLD=$OLDPWD/$OLD ;; esac
case "$NEW" in /*) ;; *) [ -x "$OLDPWD/$NEW" ] && NEW=$OLDPWD/$NEW ;; esac
TMP=${TMPDIR:-/tmp}/pith-$(basename "$0" .sh)-$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM
export OMP_WAIT_POLICY=passive
THREADS=

passed=0 failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $*"; failed=$((failed + 1)); }

# ab NAME OUT_ARG ARGS...: runs both binaries with ARGS (and $THREADS);
# OUT_ARG 1: the result is the file after --out (appended here), else
# stdout. One ok line if the results are the same bytes.
ab() {
    name=$1 file=$2
    shift 2
    for side in old new; do
        bin=$OLD
        [ $side = new ] && bin=$NEW
        rm -f "$TMP/$side.out"
        if [ "$file" = 1 ]; then
            # shellcheck disable=SC2086
            "$bin" "$@" --out "$TMP/$side.out" $THREADS >/dev/null 2>"$TMP/$side.err" </dev/null
        else
            # shellcheck disable=SC2086
            "$bin" "$@" $THREADS >"$TMP/$side.out" 2>"$TMP/$side.err" </dev/null
        fi
        echo $? >"$TMP/$side.st"
    done
    so=$(cat "$TMP/old.st") sn=$(cat "$TMP/new.st")
    if [ "$so" != 0 ] || [ "$sn" != 0 ]; then
        not_ok "$name: status old $so, new $sn: $(tail -n 1 "$TMP/old.err" | head -c 200) | $(tail -n 1 "$TMP/new.err" | head -c 200)"
    elif [ ! -s "$TMP/old.out" ]; then
        not_ok "$name: empty output"
    elif cmp -s "$TMP/old.out" "$TMP/new.out"; then
        ok "$name: identical ($(wc -c <"$TMP/new.out") bytes)"
    else
        at=$(cmp "$TMP/old.out" "$TMP/new.out" 2>&1 | sed -n 's/.* differ: byte \([0-9]*\).*/\1/p')
        if [ -z "$at" ]; then not_ok "$name: differ in length: old $(wc -c <"$TMP/old.out"), new $(wc -c <"$TMP/new.out") bytes"
        elif [ "$file" = 1 ]; then not_ok "$name: differ from byte $at (float $(((at - 1) / 4)) of the [position][vocab] array)"
        else not_ok "$name: differ: old '$(head -c 200 "$TMP/old.out")' new '$(head -c 200 "$TMP/new.out")'"; fi
    fi
}

#!/bin/sh
# ab_logits.sh OLD_PITH NEW_PITH - a developer tool (not part of `make test`):
# do two pith binaries compute the same bits? For a refactor that must not
# change a result (`make ab OLD=path/to/old/pith` compares with ./pith).
#
# For every `logits` case of the fixtures' cases.tsv, in every load mode
# (mmap, read, stream), with --kv-type f32 and with the default KV type, fed
# in one step (-b 512), in steps of 7 and of 1:
#     pith logits MODEL --prompt-ids IDS --out FILE
# with both binaries, the two files compared byte for byte (cmp). For every
# `greedy` case:
#     pith run MODEL --prompt-ids IDS --print-ids -n 32 --temp 0 --kv-type f32
# with both, stdout compared. One ok/not ok line per comparison, then a
# summary; exit status 1 when any differs or fails.
#
# Environment: PITH_FIXTURES (default ../shared/fixtures), AB_THREADS (-t
# for every run; default: pith's own choice), AB_FILTER (only the cases whose
# id matches this grep -E pattern).
usage() { echo "usage: $0 OLD_PITH NEW_PITH" >&2; exit 2; }
[ $# -eq 2 ] || usage
OLD=$1 NEW=$2
for b in "$OLD" "$NEW"; do
    [ -x "$b" ] || { echo "$0: $b: not an executable" >&2; exit 2; }
done
cd "$(dirname "$0")/.." || exit 2
case "$OLD" in /*) ;; *) [ -x "$OLDPWD/$OLD" ] && OLD=$OLDPWD/$OLD ;; esac
case "$NEW" in /*) ;; *) [ -x "$OLDPWD/$NEW" ] && NEW=$OLDPWD/$NEW ;; esac
FIX=${PITH_FIXTURES:-../shared/fixtures}
CASES=$FIX/cases.tsv
[ -f "$CASES" ] || { echo "$0: $CASES: not found (the fixtures, see $FIX/README.md)" >&2; exit 2; }
TMP=${TMPDIR:-/tmp}/pith-ab-$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM
export OMP_WAIT_POLICY=passive
THREADS=
[ -n "${AB_THREADS:-}" ] && THREADS="-t $AB_THREADS"

passed=0 failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $*"; failed=$((failed + 1)); }

# ab NAME OUT_ARG ARGS...: runs both binaries with ARGS; OUT_ARG 1: the
# result is the file after --out (appended here), else stdout.
ab() {
    name=$1 file=$2
    shift 2
    for side in old new; do
        bin=$OLD
        [ $side = new ] && bin=$NEW
        rm -f "$TMP/$side.out"
        if [ "$file" = 1 ]; then
            # shellcheck disable=SC2086
            "$bin" "$@" --out "$TMP/$side.out" $THREADS >/dev/null 2>"$TMP/$side.err"
        else
            # shellcheck disable=SC2086
            "$bin" "$@" $THREADS >"$TMP/$side.out" 2>"$TMP/$side.err"
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

start=$(date +%s)
echo "# old: $OLD"
echo "# new: $NEW"
tab=$(printf '\t')
while IFS="$tab" read -r id model kind ids _rest; do
    [ "$id" = case_id ] && continue
    [ -n "${AB_FILTER:-}" ] && ! echo "$id" | grep -Eq "$AB_FILTER" && continue
    m=$FIX/models/$model
    case "$kind" in
        logits)
            for load in mmap read stream; do
                for kv in f32 default; do
                    kvarg=
                    [ $kv = f32 ] && kvarg="--kv-type f32"
                    for b in 512 7 1; do
                        # shellcheck disable=SC2086
                        ab "$id --load $load --kv-type $kv -b $b" 1 logits "$m" --prompt-ids "$ids" --load $load $kvarg -b $b </dev/null
                    done
                done
            done
            ;;
        greedy)
            ab "$id greedy -n 32 --kv-type f32" 0 run "$m" --prompt-ids "$ids" --print-ids -n 32 --temp 0 --kv-type f32 </dev/null
            ;;
    esac
done <"$CASES"
echo "# $passed identical, $failed different or failed, in $(($(date +%s) - start)) s"
[ $failed -eq 0 ]

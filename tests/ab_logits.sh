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
. "$(dirname "$0")/ab_lib.sh"
FIX=${PITH_FIXTURES:-../shared/fixtures}
CASES=$FIX/cases.tsv
[ -f "$CASES" ] || { echo "$0: $CASES: not found (the fixtures, see $FIX/README.md)" >&2; exit 2; }
[ -n "${AB_THREADS:-}" ] && THREADS="-t $AB_THREADS"

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
                        ab "$id --load $load --kv-type $kv -b $b" 1 logits "$m" --prompt-ids "$ids" --load $load $kvarg -b $b
                    done
                done
            done
            ;;
        greedy)
            ab "$id greedy -n 32 --kv-type f32" 0 run "$m" --prompt-ids "$ids" --print-ids -n 32 --temp 0 --kv-type f32
            ;;
    esac
done <"$CASES"
echo "# $passed identical, $failed different or failed, in $(($(date +%s) - start)) s"
[ $failed -eq 0 ]

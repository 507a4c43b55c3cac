#!/bin/sh
# ab_ci.sh - CI's bit-identity check against a pinned baseline (.ci/run runs
# it after `make test` and tests/cross.sh): the release pith of the commit
# named in tests/ab_baseline, built from this clone's history into
# build/ab-base (once; rebuilt when the commit changes), against ./pith:
#   tests/ab_logits.sh  every fixture case: logits in every load mode, KV
#                       type and step size, greedy ids
#   tests/ab_arch.sh    the architectures without fixtures (when present)
# byte for byte. Exit status 1 if anything differs or fails, or (one line)
# if the commit is not in the clone.
cd "$(dirname "$0")/.." || exit 1
base=$(grep -v '^#' tests/ab_baseline | head -1)
dir=build/ab-base
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
    echo "not ok - ab_ci: the baseline commit $base (tests/ab_baseline) is not in this clone: fetch it (a full clone)"
    exit 1
fi
start=$(date +%s)
if [ ! -x "$dir/pith" ] || [ "$(cat "$dir/.commit" 2>/dev/null)" != "$base" ]; then
    rm -rf "$dir" && mkdir -p "$dir" &&
        git archive "$base" | tar -x -C "$dir" &&
        make -s -C "$dir" -j2 pith >"$dir.log" 2>&1 &&
        echo "$base" >"$dir/.commit" ||
        { echo "not ok - ab_ci: building $base in $dir failed: $(tail -c 300 "$dir.log")"; exit 1; }
fi
make -s -j2 pith build/rel/tools/mkmodel >/dev/null || { echo "not ok - ab_ci: make pith failed"; exit 1; }
echo "# ab_ci: baseline $base built in $(($(date +%s) - start)) s"
status=0
sh tests/ab_logits.sh "$dir/pith" ./pith || status=1
if [ -f tests/ab_arch.sh ]; then sh tests/ab_arch.sh "$dir/pith" ./pith || status=1; fi
echo "# ab_ci: $(($(date +%s) - start)) s, status $status"
exit $status

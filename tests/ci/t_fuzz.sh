# Part of `make ci-test` (CI's stage after make test), not of `make test`:
# clang builds the whole core again for the harnesses (about 50 CPU s).
# The libFuzzer harnesses of tests/fuzz/ under ASan+UBSan, after replaying
# every committed regression input, each for a bounded time: FUZZ_SECONDS,
# 2 here by default (CI's budget: 16 s for the eight harnesses, a
# smoke run: 5,000 to 220,000 executions each; campaigns find more;
# `make fuzz` runs 10 s each, a campaign FUZZ_SECONDS=600). Each run grows
# the corpus of build/fuzz/corpus/, so the runs add up. Needs clang with its
# libFuzzer runtime (Debian: clang, libclang-rt-14-dev): without them this
# test fails, it does not skip.
. tests/lib.sh
if ! command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1; then
    not_ok "fuzz: clang is not installed (apt-get install clang libclang-rt-14-dev)"
    finish
fi
if ! make -s fuzz-build >"$TMP/build.log" 2>&1; then
    not_ok "fuzz: harnesses build: $(grep -m3 -E 'error|cannot find' "$TMP/build.log")"
    finish
fi
ok "fuzz: harnesses build (clang, libFuzzer, ASan+UBSan)"
sh tests/fuzz/run.sh "${FUZZ_SECONDS:-2}" >"$TMP/fuzz.out" 2>&1
cat "$TMP/fuzz.out"
grep -q '^not ok' "$TMP/fuzz.out" && failures=$((failures + 1))
[ "$(grep -c '^ok - fuzz .*executions' "$TMP/fuzz.out")" -eq 8 ] || not_ok "fuzz: every harness ran"
finish

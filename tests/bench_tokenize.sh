#!/bin/sh
# bench_tokenize.sh - how long tokenizing 1 MiB of mixed text takes (issue
# 35: long agent prompts must not wait for the tokenizer): `pith tokenize
# --file` (release build) against llama.cpp's `llama-tokenize -f` (the
# native build of ../shared/tools/llamacpp/build.sh, same source as the
# reference tests), back to back on the same vocabulary files, with checks
# that both give the same ids. The text: pith's own docs and sources
# (English prose, Markdown tables, C code), its JSON test cases, and a block
# of other scripts (CJK, Cyrillic, Arabic, Devanagari, Thai, Hangul, emoji,
# digits), repeated to 1 MiB. Not part of `make test`.
#
#   sh tests/bench_tokenize.sh [RUNS]       (default 5; the fastest run counts)
set -u
RUNS=${1:-5}
LL=${LLAMA_TOKENIZE:-${LLAMACPP_DIR:-$HOME/.cache/llamacpp-native}/build/bin/llama-tokenize}
FIX=${PITH_FIXTURES:-../shared/fixtures}
TMP=${BENCH_TMP:-${TMPDIR:-/tmp}/pith-bench-tokenize-$$}   # BENCH_TMP: kept, to look at
[ -n "${BENCH_TMP:-}" ] || trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP"
[ -x "$LL" ] || { echo "bench_tokenize: no $LL (sh ../shared/tools/llamacpp/build.sh)"; exit 1; }
src=$(sh tests/llamacpp_src.sh) || exit 1
make -s -j2 pith || exit 1

cat >"$TMP/scripts.txt" <<'TEXT'
東京は日本の首都です。カタカナ、ひらがな、漢字を混ぜた文章もよくあります！ 北京是中国的首都，人口超过两千万。
Привет, МИР! Как дела? Всё хорошо, спасибо. Ελληνικά: Αθήνα, Θεσσαλονίκη. İstanbul'da güzel bir gün.
مرحبا بالعالم، هذا نص عربي للاختبار. नमस्ते दुनिया, यह एक परीक्षण है। สวัสดีครับ ยินดีต้อนรับ 안녕하세요 세계
emoji 🙂👍🏽 and ✨ 👨‍👩‍👧 🇫🇷! price: 100€ or $5.99 (±2) → ok © 2024; 1234567 3.14159 2025-11-24 x1y22z333
TEXT
{ cat README.md docs/*.md src/text/*.c tests/templates/*.json
  i=0; while [ "$i" -lt 40 ]; do cat "$TMP/scripts.txt"; i=$((i + 1)); done; } >"$TMP/part"
: >"$TMP/all"
while [ "$(wc -c <"$TMP/all")" -lt 1048576 ]; do cat "$TMP/part" >>"$TMP/all"; done
# 1 MiB, cut after the last newline before it (no character split in two)
head -c 1048576 "$TMP/all" | sed '$d' >"$TMP/text"
bytes=$(wc -c <"$TMP/text")
echo "text: $bytes bytes ($(LC_ALL=C.UTF-8 wc -m <"$TMP/text") characters)"

# best_time VAR CMD...: the least wall time of RUNS runs, in ms
best_ms() {
    best=
    r=0
    while [ "$r" -lt "$RUNS" ]; do
        t0=$(date +%s%N)
        "$@" >"$TMP/out" 2>"$TMP/err" || { echo "failed: $* $(head -c 300 "$TMP/err")"; exit 1; }
        t1=$(date +%s%N)
        ms=$(( (t1 - t0) / 1000000 ))
        if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
        r=$((r + 1))
    done
    echo "$best"
}

printf '%-34s %9s %9s %9s %9s %7s\n' vocabulary ids "pith ms" "llama ms" "pith enc" ratio
for v in "$FIX/tokenizer/qwen3-vocab.gguf" "$src/models/ggml-vocab-llama-bpe.gguf" \
         "$src/models/ggml-vocab-gpt-2.gguf" "$src/models/ggml-vocab-deepseek-llm.gguf" \
         "$src/models/ggml-vocab-command-r.gguf"; do
    # the same ids (llama-tokenize: no BOS; both parse special tokens)
    # (one id a line on both sides; llama-tokenize must not read \t in the text as a tab)
    ./pith tokenize "$v" --file "$TMP/text" 2>"$TMP/err" | tr ' ' '\n' >"$TMP/pith.ids" || { cat "$TMP/err"; exit 1; }
    "$LL" -m "$v" -f "$TMP/text" --ids --no-bos --no-escape --log-disable 2>/dev/null | tr -d '[],' |
        tr -s ' \n' '\n\n' | sed '/^$/d' >"$TMP/ll.ids"
    if ! cmp -s "$TMP/pith.ids" "$TMP/ll.ids"; then
        echo "$(basename "$v"): the ids differ ($(wc -w <"$TMP/pith.ids") vs $(wc -w <"$TMP/ll.ids"))"; continue
    fi
    pith_ms=$(best_ms ./pith tokenize "$v" --file "$TMP/text")
    ll_ms=$(best_ms "$LL" -m "$v" -f "$TMP/text" --ids --no-bos --no-escape --log-disable)
    enc=$(./pith tokenize "$v" --file "$TMP/text" --time 2>&1 >/dev/null | sed -n 's/.*encode \([0-9.]*\) s.*/\1/p')
    printf '%-34s %9s %9s %9s %9s %7s\n' "$(basename "$v")" "$(wc -w <"$TMP/pith.ids")" "$pith_ms" "$ll_ms" \
        "${enc}s" "$(awk -v a="$ll_ms" -v b="$pith_ms" 'BEGIN { printf "%.2fx", a / b }')"
done
echo "(ms: whole process, load + tokenize + print, the fastest of $RUNS runs; ratio: llama.cpp / pith)"

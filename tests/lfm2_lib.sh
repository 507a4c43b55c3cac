# lfm2_lib.sh - sourced by tests/t_llamacpp_arch.sh once its lfm2 models
# are written ($TMP/lfm2-f32.gguf, $TMP/lfm2-q8_0.gguf: 16 layers of which
# 10 are short convolutions of 3 taps, 6 attend with 2 kv heads of 64;
# width 256): what the convolution state does to memory and to a full
# context; the lfm2 pre-tokenizer; broken lfm2 files.

# --plan: the KV cache of the 6 attention layers only (6 x 2 heads x 256
# positions x 64 x 2 bytes, keys and values) and a convolution state per
# sequence of exactly 10 layers x 256 channels x 2 floats
"$PITH" run "$TMP/lfm2-f32.gguf" -p hi --plan -c 256 >"$TMP/plan" 2>&1
if grep -q "^  kv cache  *786432 bytes" "$TMP/plan" && grep -q "^  conv state  *20480 bytes" "$TMP/plan"; then
    ok "lfm2 --plan: kv cache of the 6 attention layers (786432 bytes), conv state 20480 bytes"
else
    not_ok "lfm2 --plan: $(grep -E 'kv|conv' "$TMP/plan")"
fi
"$PITH" run "$TMP/lfm2-f32.gguf" -p hi --plan -c 256 --kv-type q8_0 >"$TMP/plan" 2>&1
if grep -q "^  kv cache  *417792 bytes" "$TMP/plan" && grep -q "^  conv state  *20480 bytes" "$TMP/plan"; then
    ok "lfm2 --plan --kv-type q8_0: rows of 68 bytes (417792), the conv state stays F32 (20480)"
else
    not_ok "lfm2 --plan q8_0: $(grep -E 'kv|conv' "$TMP/plan")"
fi
# serve --slots 2: one state per slot
"$PITH" serve "$TMP/lfm2-f32.gguf" --slots 2 -c 256 --plan >"$TMP/plan" 2>&1
if grep -q "^  conv state, sequence 0  *20480 bytes" "$TMP/plan" && grep -q "^  conv state, sequence 1  *20480 bytes" "$TMP/plan"; then
    ok "lfm2 serve --slots 2 --plan: a conv state for each slot"
else
    not_ok "lfm2 serve --slots 2 --plan: $(grep -E 'conv' "$TMP/plan")"
fi

# --mem with --load mmap: one byte below what a context of 256 (the model's longest) needs, the
# largest context that fits (and not one more)
need() { sed -n "s/^  needs --load $1, context $2  *\([0-9][0-9]*\) bytes.*/\1/p" "$TMP/plan"; }
"$PITH" run "$TMP/lfm2-q8_0.gguf" -p hi --plan -c 256 >"$TMP/plan" 2>&1
budget=$(($(need mmap 256) - 1))
"$PITH" run "$TMP/lfm2-q8_0.gguf" -p hi --plan -c 256 --load mmap --mem $budget >"$TMP/plan" 2>&1
shrunk=$(sed -n 's/^decision: --load mmap, context \([0-9]*\) (shrunk to fit)$/\1/p' "$TMP/plan")
if [ -n "$shrunk" ] && [ "$shrunk" -ge 64 ] && [ "$shrunk" -lt 256 ]; then
    "$PITH" run "$TMP/lfm2-q8_0.gguf" -p hi --plan -c "$shrunk" >"$TMP/plan" 2>&1; at=$(need mmap "$shrunk")
    "$PITH" run "$TMP/lfm2-q8_0.gguf" -p hi --plan -c $((shrunk + 1)) >"$TMP/plan" 2>&1; above=$(need mmap $((shrunk + 1)))
    if [ "$at" -le "$budget" ] && [ "$above" -gt "$budget" ]; then
        ok "lfm2 --mem $budget: context $shrunk, the largest that fits ($at <= $budget < $above)"
    else not_ok "lfm2 --mem: context $shrunk needs $at, one more $above, budget $budget"; fi
else
    not_ok "lfm2 --mem $budget: decided '$(sed -n 's/^decision: //p' "$TMP/plan")'"
fi

# A full context goes on: the state cannot shift, so the kept tokens are fed
# again. After the first shift the run must go on exactly as a run whose
# prompt is what was kept plus the token being fed (the same positions).
"$PITH" run "$TMP/lfm2-q8_0.gguf" --prompt-ids "$IDS" -n 60 -c 64 --temp 0 --ignore-eos --print-ids -t 1 \
    >"$TMP/shift.ids" 2>"$TMP/err"
line=$(grep -m1 "context full: dropped" "$TMP/err")
drop=$(echo "$line" | sed -n 's/.*dropped \([0-9]*\) tokens after the first \([0-9]*\), fed the \([0-9]*\) left again.*/\1/p')
if [ "$(tr ',' '\n' <"$TMP/shift.ids" | grep -c .)" -eq 60 ] && [ -n "$drop" ]; then
    ok "lfm2: a full context is shifted by feeding the kept tokens again ($line), 60 tokens generated"
    # the sequence when the cache was full: the 40 prompt ids and the first
    # 24 generated; kept: its positions drop..63 (--keep 0), then token 24
    all=$(printf '%s,%s' "$IDS" "$(cat "$TMP/shift.ids")" | tr ',' '\n')
    kept=$(echo "$all" | sed -n "$((drop + 1)),65p" | paste -sd, -)
    rest=$(echo "$all" | sed -n '66,$p' | paste -sd, -)
    "$PITH" run "$TMP/lfm2-q8_0.gguf" --prompt-ids "$kept" -n 35 -c 64 --temp 0 --ignore-eos --print-ids -t 1 \
        >"$TMP/kept.ids" 2>"$TMP/err2"
    if [ -n "$rest" ] && [ "$(cat "$TMP/kept.ids")" = "$rest" ]; then
        ok "lfm2: after the shift, the 35 tokens are those of a run given the kept tokens as its prompt"
    else
        not_ok "lfm2 shift: [$rest] vs a run from the kept tokens [$(cat "$TMP/kept.ids")] $(head -c 200 "$TMP/err2")"
    fi
else
    not_ok "lfm2 context full: $(head -c 300 "$TMP/err")"
fi
# --no-shift stops there instead
"$PITH" run "$TMP/lfm2-q8_0.gguf" --prompt-ids "$IDS" -n 60 -c 64 --temp 0 --ignore-eos --print-ids --no-shift -t 1 \
    >"$TMP/out" 2>"$TMP/err"
n=$(tr ',' '\n' <"$TMP/out" | grep -c .)
[ "$n" -ge 24 ] && [ "$n" -le 25 ] && ok "lfm2 --no-shift: stops when the context is full ($n tokens)" \
    || not_ok "lfm2 --no-shift: $n tokens, $(head -c 200 "$TMP/err")"

# LFM2.5's windowed attention layers (t_llamacpp_arch.sh's window-8 model)
# under ASan: rings and convolution states through a full context, which
# feeds the kept tokens again (neither can shift)
"$PITH" run "$TMP/lfm2-window8-f32.gguf" --prompt-ids "$IDS" -n 60 -c 64 --temp 0 --ignore-eos --print-ids -t 1 \
    >"$TMP/out" 2>"$TMP/err"
n=$(tr ',' '\n' <"$TMP/out" | grep -c .)
[ "$n" -eq 60 ] && ok "lfm2 with a window: 60 tokens through a full context of 64" \
    || not_ok "lfm2 with a window, full context: $n tokens, $(head -c 200 "$TMP/err")"

# LFM2's tokenizer.ggml.pre "lfm2": llama.cpp reads it as llama3's
# pre-tokenizer (digits in runs of up to 3, whole-token pieces kept whole,
# a BOS by default). LFM2's own vocabulary cannot be obtained here: Qwen3's
# 151k-token one from the fixtures, written with pre "lfm2", tokenized by
# both (its merges have no multi-digit tokens, so the digit runs are not
# told apart from qwen2's by these texts).
"$MK" "$TMP/lfm2-vocab.gguf" $LFM --layers 2 --attn-layers 1 --tokenizer-from "$FIX/tokenizer/qwen3-vocab.gguf" --pre lfm2 \
    >/dev/null 2>&1
cat >"$TMP/texts.json" <<'JSON'
["Hello world", "The year 2025 had 365 days; 3.14159 and 1,000,000 and 1234567.", " Hello  world ", "Hello\n\nworld\t!",
 "naïve café, Straße", "東京は日本の首都です。", "def f(x):\n    return x**2  # square\n", "I'm we'LL they'RE",
 "<|im_start|>user\nHi<|im_end|>\n", "emoji 🙂👍🏽", "   ", ""]
JSON
if ref_tokenize "$TMP/lfm2-vocab.gguf" "$TMP/texts.json" "$TMP/ref"; then
    # every text in one process (tests/tools/tokenize_files, the vocabulary
    # loaded once), and pith tokenize itself on the first
    rm -f "$TMP"/lfm2text.*
    node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).forEach((t, i) =>
                 require("fs").writeFileSync(process.argv[2] + "/lfm2text." + (i + 1), t))' "$TMP/texts.json" "$TMP"
    n=$(ls "$TMP"/lfm2text.* | wc -l)
    files=$(i=0; while [ "$i" -lt "$n" ]; do i=$((i + 1)); printf '%s ' "$TMP/lfm2text.$i"; done)
    # shellcheck disable=SC2086
    ${TOKF:-build/asan/tools/tokenize_files} "$TMP/lfm2-vocab.gguf" $files >"$TMP/got" 2>"$TMP/err"
    "$PITH" tokenize "$TMP/lfm2-vocab.gguf" --file "$TMP/lfm2text.1" >"$TMP/got1" 2>>"$TMP/err"
    i=0 same=0 diff=
    while [ "$i" -lt "$n" ]; do
        i=$((i + 1))
        want=$(sed -n "${i}p" "$TMP/ref")
        got=$(sed -n "${i}p" "$TMP/got")
        if [ "$got" = "$want" ]; then same=$((same + 1)); else diff="$diff text $i: [$got] vs [$want]"; fi
    done
    [ "$(cat "$TMP/got1")" = "$(sed -n 1p "$TMP/ref")" ] || diff="$diff pith tokenize text 1: [$(cat "$TMP/got1")]"
    [ "$same" -eq "$i" ] && [ "$i" -gt 0 ] && [ -z "$diff" ] && ok "lfm2 pre-tokenizer: the same ids as llama.cpp on $i texts" \
        || not_ok "lfm2 tokenize:$diff $(head -c 200 "$TMP/err")"
else
    not_ok "llama.cpp tokenize failed: $(tail -c 300 "$TMP/ref.err")"
fi

# broken lfm2 files: one line each, exit 2
# (the release ggufedit: the same bytes; t_robust.sh runs the ASan one)
EDIT=${EDIT:-build/rel/tools/ggufedit}
bad() { # NAME EDITS...: a copy of lfm2-f32 with EDITS, refused
    name=$1; shift
    if "$EDIT" "$TMP/lfm2-f32.gguf" "$TMP/bad.gguf" "$@" >/dev/null 2>&1; then
        expect_fail2 "lfm2 refused: $name" "$PITH" run "$TMP/bad.gguf" -p hi -n 1
    else not_ok "ggufedit $*"; fi
}
bad "15 head_count_kv entries for 16 layers" --shrink-array lfm2.attention.head_count_kv 15
bad "no shortconv.l_cache" --drop-key lfm2.shortconv.l_cache
bad "a convolution layer without its kernel" --drop-tensor blk.0.shortconv.conv.weight
bad "head_count_kv one number (no convolution layers: their tensors have no use)" --set-u32 lfm2.attention.head_count_kv 2
bad "no token_embd_norm" --drop-tensor token_embd_norm.weight

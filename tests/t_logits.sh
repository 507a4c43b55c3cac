#!/bin/sh
# t_logits.sh - `pith logits` end to end: the file it writes meets the
# fixtures' tolerance (tests/tools/main_cmplogits.c), in both file backends,
# with threads and small steps; bad arguments end with one line and status 2.
. tests/lib.sh
CMP=${CMP:-build/asan/tools/cmplogits}
M=$FIX/models

# ids of a case, from cases.tsv
ids() { awk -F'\t' -v c="$1" '$1 == c { print $4 }' "$FIX/cases.tsv"; }

run_case() { # NAME CASE MODEL [pith options...]
    name=$1 case=$2 model=$3; shift 3
    out="$TMP/$case.f32"
    rm -f "$out"
    if "$PITH" logits "$M/$model" --prompt-ids "$(ids "$case")" --out "$out" "$@" >"$TMP/out" 2>"$TMP/err" &&
        "$CMP" "$case" "$out" >"$TMP/cmp" 2>&1; then
        ok "$name: $(cat "$TMP/cmp")"
    else
        not_ok "$name: $(head -c 300 "$TMP/err") $(cat "$TMP/cmp" 2>/dev/null)"
    fi
}

run_case "logits f32 model, mmap" pub_tq3_f32_logits_r16 tiny-qwen3-f32.gguf --kv-type f32 -t 1
run_case "logits f32 model, --no-mmap, 2 threads, steps of 5" pub_tq3_f32_logits_r16 tiny-qwen3-f32.gguf \
    --kv-type f32 --no-mmap -t 2 -b 5
run_case "logits untied f16 model, -c 64" pub_tq3_untied_f16_logits_r05 tiny-qwen3-untied-f16.gguf --kv-type f32 -c 64
run_case "logits Q4_K_M model" pub_tq3_Q4_K_M_logits_r05 tiny-qwen3-Q4_K_M.gguf --kv-type f32 -t 2
run_case "logits Q4_0 model, default f16 cache" pub_tq3_Q4_0_logits_r05 tiny-qwen3-Q4_0.gguf

check "logits --plan prints the memory plan" "$PITH" logits "$M/tiny-qwen3-f32.gguf" --prompt-ids 1,2 \
    --out "$TMP/p.f32" --plan
if grep -q "kv cache" "$TMP/out" && [ "$(wc -c <"$TMP/p.f32")" -eq $((2 * 2026 * 4)) ]; then
    ok "logits --plan lists the kv cache; file holds 2 rows"
else not_ok "logits --plan output or file size wrong"; fi

F32=$M/tiny-qwen3-f32.gguf
expect_fail2 "logits: missing --out" "$PITH" logits "$F32" --prompt-ids 1,2
expect_fail2 "logits: missing --prompt-ids" "$PITH" logits "$F32" --out "$TMP/x.f32"
expect_fail2 "logits: missing model" "$PITH" logits --prompt-ids 1 --out "$TMP/x.f32"
expect_fail2 "logits: id out of range" "$PITH" logits "$F32" --prompt-ids 1,2026 --out "$TMP/x.f32"
expect_fail2 "logits: id not a number" "$PITH" logits "$F32" --prompt-ids 1,x --out "$TMP/x.f32"
expect_fail2 "logits: bad --kv-type" "$PITH" logits "$F32" --prompt-ids 1 --out "$TMP/x.f32" --kv-type q8
expect_fail2 "logits: -c smaller than the prompt" "$PITH" logits "$F32" --prompt-ids 1,2,3 --out "$TMP/x.f32" -c 2
expect_fail2 "logits: -c beyond the model's context" "$PITH" logits "$F32" --prompt-ids 1 --out "$TMP/x.f32" -c 5000
expect_fail2 "logits: unknown option" "$PITH" logits "$F32" --prompt-ids 1 --out "$TMP/x.f32" --frobnicate
expect_fail2 "logits: missing model file" "$PITH" logits "$TMP/nope.gguf" --prompt-ids 1 --out "$TMP/x.f32"
expect_fail2 "logits: unwritable --out" "$PITH" logits "$F32" --prompt-ids 1 --out "$TMP/no/such/dir/x.f32"
expect_fail2 "logits: not a model (vocab-only file)" "$PITH" logits "$FIX/tokenizer/ggml-vocab-qwen2.gguf" \
    --prompt-ids 1 --out "$TMP/x.f32"
finish

#!/bin/sh
# t_llamacpp_gemma4.sh - Gemma 4 (gemma4, E2B/E4B) against llama.cpp itself
# (npm's node-llama-cpp, as tests/t_llamacpp_arch.sh, whose compare() this
# follows; greedy() is llamacpp_lib.sh's): random models made by mkmodel in
# E2B's proportions, smaller: of every 5 layers 4 windowed with heads of
# 256 and a global one with heads of 512 (a quarter of its pairs rotating:
# rope_freqs), the last half of the layers reading the KV of the last
# windowed and global layers before them (with FFNs twice as wide),
# per-layer embeddings of 256, an output scale per layer, V normed without
# a weight, q.k unscaled, logits softcapped at llama.cpp's default 30 (the
# files carry no final_logit_softcapping). F16, Q8_0 and Q4_K_M; logits of
# every position of a 40-token prompt in one step, in steps of 7 and one
# token at a time, within the fixtures' classes (README section 6 of the
# fixtures); greedy continuations; each feature taken out of a file moves
# pith's logits outside the class of llama.cpp's of the whole file; the
# per-layer embedding table never resident.
. tests/lib.sh
MK=${MK:-build/rel/tools/mkmodel}
CMP=${CMP:-build/rel/tools/cmplogits}
ED=${ED:-build/rel/tools/ggufedit}
# the logits and greedy runs are arithmetic: the release pith (test_forward
# runs gemma4's stages under ASan and UBSan; the plan stays on the ASan pith)
FWD=${FWD:-./pith}
[ -x "$FWD" ] || not_ok "$FWD is not built (make pith)"
if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
else not_ok "$(cat "$TMP/install.err")"; finish; fi
. tests/llamacpp_lib.sh

IDS=5,80,300,17,250,9,120,66,200,31,4,77,1000,3,420,99,12,640,8,250,711,42,93,508,61,333,7,880,145,26,999,58,402,13,777,230,64,519,88,150


# Gemma 4 E2B: 35 layers of 1536 (8 q heads on 1 kv head), 4 windowed
# (512) then a global layer, the last 20 sharing KV, FFNs of 6144 (12288
# where KV is shared), per-layer embeddings of 256; here 10 layers of 256,
# 4 q heads on 1, a window of 16 (the prompt is longer), the last 5 sharing
# KV, FFNs of 512 (1024). (mkmodel conditions the weights as a trained
# model's: tests/tools/main_mkmodel.c, gemma4_layer.)
G4="--arch gemma4 --layers 10 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 512 --head-dim-swa 256 --window 16
    --shared-kv 5 --pe 256 --rope-partial 4"
# shellcheck disable=SC2086
compare gemma4-f16 F16 $G4 --double-wide --type f16 --seed 141
compare gemma4-q8_0 QUANT $G4 --double-wide --type q8_0 --seed 142
greedy gemma4-q8_0 0.3
compare gemma4-q4_k_m QUANT $G4 --double-wide --type q4_k_m --seed 143
# windowed and global layers with kv heads of their own (head_count_kv an
# array, as the converter writes it for Gemma 4 26B and 31B); one FFN width
compare gemma4-kv2-f16 F16 $G4 --kv-heads-swa 2 --type f16 --seed 144
# F32 weights: llama.cpp's GELU goes through an F16 table (rounding flips):
# its own logits of such a file of 6 layers move by 1.3e-4 of the largest
# between the whole prompt in one step and one token at a time (measured),
# more than the F32 class allows; the class holds on 3 layers: a windowed
# and a global one, then a windowed one reading the first one's KV.
compare gemma4-3l-f32 F32 --arch gemma4 --layers 3 --swa-pattern 2 --embd 128 --heads 4 --kv-heads 1 --kv-heads-swa 2 \
    --head-dim 512 --head-dim-swa 256 --window 16 --shared-kv 1 --double-wide --rope-partial 4 --ff 64 --pe 32 --seed 2
greedy gemma4-3l-f32 1e-3

# Each feature matters: taken out of the F16 file, pith's logits of the
# rest are outside the class of llama.cpp's logits of the whole.
F16=$TMP/gemma4-f16.gguf
"$ED" "$TMP/gemma4-kv2-f16.gguf" "$TMP/g4-noshare.gguf" --set-u32 gemma4.attention.shared_kv_layers 0 >/dev/null 2>&1
outside gemma4-kv2-f16 F16 "$TMP/g4-noshare.gguf" "the last layers with KV of their own"
drop=""
for l in 0 1 2 3 4 5 6 7 8 9; do drop="$drop --drop-tensor blk.$l.inp_gate.weight --drop-tensor blk.$l.proj.weight --drop-tensor blk.$l.post_norm.weight"; done
# shellcheck disable=SC2086
"$ED" "$F16" "$TMP/g4-nope.gguf" --set-u32 gemma4.embedding_length_per_layer_input 0 --drop-tensor per_layer_token_embd.weight \
    --drop-tensor per_layer_model_proj.weight --drop-tensor per_layer_proj_norm.weight $drop >/dev/null 2>&1
outside gemma4-f16 F16 "$TMP/g4-nope.gguf" "without the per-layer embeddings"
drop=""
for l in 0 1 2 3 4 5 6 7 8 9; do drop="$drop --drop-tensor blk.$l.layer_output_scale.weight"; done
# shellcheck disable=SC2086
"$ED" "$F16" "$TMP/g4-noscale.gguf" $drop >/dev/null 2>&1
outside gemma4-f16 F16 "$TMP/g4-noscale.gguf" "without the layers' output scales"
"$ED" "$F16" "$TMP/g4-nofreqs.gguf" --drop-tensor rope_freqs.weight >/dev/null 2>&1
outside gemma4-f16 F16 "$TMP/g4-nofreqs.gguf" "every pair of the global layers rotating (no rope_freqs)"
"$ED" "$F16" "$TMP/g4-nowindow.gguf" --set-u32 gemma4.attention.sliding_window 4096 >/dev/null 2>&1
outside gemma4-f16 F16 "$TMP/g4-nowindow.gguf" "without the window"

# The per-layer embedding table is never resident: mapped, the plan counts
# the file without it; read and stream read its rows per step into a
# buffer of a row per token; the three modes give the same logits.
Q8=$TMP/gemma4-q8_0.gguf
"$PITH" run "$Q8" -p hi --plan -c 256 >"$TMP/plan" 2>&1
size=$(wc -c <"$Q8")
table=$("$PITH" inspect "$Q8" --tensors | awk '$1 == "per_layer_token_embd.weight" { print $NF }')
row=$((table / $(vocab_of "$Q8")))
if grep -q "model file, memory-mapped  *$((size - table)) bytes .*without the per-layer embeddings" "$TMP/plan"; then
    ok "gemma4 --plan: the mapped file counts $((size - table)) of $size bytes, not the per-layer table"
else
    not_ok "gemma4 --plan: want $((size - table)) bytes mapped: $(grep 'model file' "$TMP/plan")"
fi
"$PITH" run "$Q8" -p hi --plan -c 256 --load read -b 32 >"$TMP/plan" 2>&1
if grep -q "per-layer embedding rows  *$((32 * row)) bytes" "$TMP/plan" && ! grep -q "weights (read, no mmap)  *$table" "$TMP/plan"; then
    ok "gemma4 --plan --load read: 32 rows of the per-layer table ($((32 * row)) bytes), not the table"
else
    not_ok "gemma4 --plan --load read: $(grep -i 'per-layer\|weights' "$TMP/plan" | tr '\n' ' ')"
fi
ours gemma4-q8_0 "$Q8" 7 "$TMP/mmap.f32"
for mode in read stream; do
    ours gemma4-q8_0 "$Q8" 7 "$TMP/$mode.f32" "--load $mode" || continue
    if [ -s "$TMP/mmap.f32" ] && cmp -s "$TMP/mmap.f32" "$TMP/$mode.f32"; then ok "gemma4 --load $mode: the same logits as mmap"
    else not_ok "gemma4 --load $mode: logits differ from mmap's"; fi
done
check "gemma4 runs with --kv-type q8_0" "$PITH" run "$Q8" --prompt-ids "$IDS" -n 4 --kv-type q8_0 -c 256
# a full context goes on: the kept tokens are fed again (rings cannot shift)
"$FWD" run "$Q8" --prompt-ids "$IDS" -n 60 -c 64 --temp 0 --ignore-eos --print-ids >"$TMP/out" 2>"$TMP/err"
if [ "$(tr ',' '\n' <"$TMP/out" | grep -c .)" -eq 60 ] && grep -q "context full: dropped .* fed the .* left again" "$TMP/err"; then
    ok "gemma4: a full context is shifted by feeding the kept tokens again, 60 tokens generated"
else
    not_ok "gemma4 context full: $(head -c 300 "$TMP/err")"
fi

# files pith would get wrong, refused with one line
refused() {
    name=$1 words=$2; shift 2
    expect_fail2 "$name" "$@"
    grep -q "$words" "$TMP/err" || not_ok "$name: not for the reason expected ($words): $(head -c 200 "$TMP/err")"
}
"$ED" "$Q8" "$TMP/g4-share9.gguf" --set-u32 gemma4.attention.shared_kv_layers 6 >/dev/null 2>&1
refused "gemma4 sharing KV after two windowed layers is refused" "shared_kv_layers after a windowed then a global layer" \
    "$PITH" run "$TMP/g4-share9.gguf" -p hi
"$ED" "$Q8" "$TMP/g4-pattern.gguf" --shrink-array gemma4.attention.sliding_window_pattern 9 >/dev/null 2>&1
refused "gemma4 with a sliding_window_pattern short of a layer is refused" "9 given for 10 layers" \
    "$PITH" run "$TMP/g4-pattern.gguf" -p hi
finish

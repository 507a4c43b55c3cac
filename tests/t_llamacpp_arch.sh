#!/bin/sh
# t_llamacpp_arch.sh - the architectures of issue 16 against llama.cpp
# itself (npm's node-llama-cpp, as tests/t_llamacpp.sh): random models made
# by mkmodel at the real models' head sizes and layer patterns (smaller
# widths), in F32, F16, Q8_0 and Q4_K_M; logits of every position of a
# 40-token prompt fed in one step, in steps of 7 and one token at a time,
# compared by cmplogits with the fixtures' tolerance classes (README section
# 6 of the fixtures); greedy continuations compared up to the first step
# whose reference gap is below the class's threshold; what llama.cpp does
# differently, refused with one line.
#   smollm3  SmolLM3-3B: heads of 128, 4 q heads per kv head, no RoPE in
#            every fourth layer (8 layers: layers 3 and 7 skip it)
#   phi3     Phi-4-mini: fused q/k/v and gate/up, heads of 128 of which 96
#            rotate, 3 q heads per kv head, LongRoPE factors (short ones
#            below the original context, long ones above it, with the
#            attention factor); Phi-3-mini: heads of 96, no GQA, no factors
#   mistral3 Ministral 3 3B: llama's layers with YaRN and the attention
#            temperature (and YaRN on a qwen3 file, as Qwen3's 128k files)
#   gemma3   Gemma 3 270M/1B: heads of 256, sliding-window layers (rings)
#            and a global one of every six, q/k norms, post-norms, GELU
#   lfm2     LFM2-350M/700M/1.2B: short-convolution layers (a state of 2
#            values per channel) among attention layers with q/k norms;
#            memory, context shift and slots in tests/lfm2_lib.sh
#   qwen35   Qwen3.5-0.8B: gated DeltaNet layers (key and value heads of
#            128, a convolution of 4) and every fourth layer attention
#            with an output gate, q/k norms, heads of 256 of which 64
#            rotate; prompts of 100 tokens (longer than llama.cpp's DeltaNet
#            chunk of 64)
. tests/lib.sh
# the models are data: the release mkmodel writes the same bytes, faster
# (t_inspect.sh runs the ASan one)
MK=${MK:-build/rel/tools/mkmodel}
# the comparison is arithmetic on data: the release cmplogits gives the same
# verdicts (t_logits.sh runs the ASan one)
CMP=${CMP:-build/rel/tools/cmplogits}
# the logits and greedy runs are arithmetic too: the release pith, whose
# forward pass of every architecture here is the ASan build's (test_forward
# runs these architectures under ASan and UBSan; the plans, refusals and
# shifts below stay on the ASan pith)
FWD=${FWD:-./pith}
[ -x "$FWD" ] || not_ok "$FWD is not built (make pith)"
NODE_DIR=build/node-llama-cpp
if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
else not_ok "$(cat "$TMP/install.err")"; finish; fi
. tests/llamacpp_lib.sh

# 40 prompt ids below the self-made vocabulary's size (1266)
IDS=5,80,300,17,250,9,120,66,200,31,4,77,1000,3,420,99,12,640,8,250,711,42,93,508,61,333,7,880,145,26,999,58,402,13,777,230,64,519,88,150

# compare NAME CLASS "PITH ARGS" MKMODEL_ARGS...: one model, pith in three
# batch shapes (whole prompt in one step, steps of 7, one token at a time)
# against llama.cpp.
compare() {
    name=$1 class=$2 pargs=$3; shift 3
    model=$TMP/$name.gguf
    if ! "$MK" "$model" "$@" >"$TMP/mk.out" 2>&1; then not_ok "$name: mkmodel failed: $(head -c 300 "$TMP/mk.out")"; return; fi
    if ! ref_logits "$model" "$IDS" "$TMP/$name.ref.f32"; then
        not_ok "$name: llama.cpp failed: $(tail -c 300 "$TMP/ref.err")"; return
    fi
    vocab=$("$PITH" inspect "$model" --tensors | awk '$1 == "token_embd.weight" { print $4 }')
    for b in 64 7 1; do
        # shellcheck disable=SC2086
        if ! "$FWD" logits "$model" --prompt-ids "$IDS" --out "$TMP/$name.f32" --kv-type f32 -b $b $pargs >"$TMP/out" 2>"$TMP/err"; then
            not_ok "$name -b $b: pith failed: $(head -c 300 "$TMP/err")"; continue
        fi
        if "$CMP" --ref "$TMP/$name.ref.f32" --class "$class" --vocab "$vocab" "$TMP/$name.f32" >"$TMP/cmp" 2>&1; then
            ok "$name -b $b vs llama.cpp: $(sed 's/^[^ ]* //' "$TMP/cmp")"
        else
            not_ok "$name -b $b vs llama.cpp: $(cat "$TMP/cmp")"
        fi
    done
}

# outside NAME CLASS MODEL WHAT: pith's logits of MODEL (the weights of
# NAME's model with a feature taken away) must fall outside CLASS against
# llama.cpp's logits of NAME: the feature matters.
outside() {
    name=$1 class=$2 model=$3 what=$4
    if "$FWD" logits "$model" --prompt-ids "$IDS" --out "$TMP/outside.f32" --kv-type f32 >/dev/null 2>"$TMP/err" &&
            ! "$CMP" --ref "$TMP/$name.ref.f32" --class "$class" \
                --vocab "$("$PITH" inspect "$model" --tensors | awk '$1 == "token_embd.weight" { print $4 }')" \
                "$TMP/outside.f32" >"$TMP/cmp" 2>&1; then
        ok "$name: $what, outside the class ($(sed 's/^[^ ]* //' "$TMP/cmp" | head -c 120))"
    else not_ok "$name: $what made no difference: $(head -c 300 "$TMP/cmp" "$TMP/err")"; fi
}

SMOL="--arch smollm3 --layers 8 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 128"
compare smollm3-f32 F32 "" $SMOL --seed 41
greedy smollm3-f32 1e-3 ""
compare smollm3-f16 F16 "" $SMOL --type f16 --untied --seed 42
compare smollm3-q8_0 QUANT "" $SMOL --type q8_0 --seed 43
greedy smollm3-q8_0 0.3 ""
compare smollm3-q4_k_m QUANT "" $SMOL --type q4_k_m --seed 44

# Phi-4-mini: 24 q heads on 8 kv heads of 128, rope.dimension_count 96,
# 128k context from 4k; here 3 on 1. Short factors: a context below the
# original (llama.cpp's 256, pith's 256 of 4096).
PHI4="--arch phi3 --layers 4 --embd 384 --ff 512 --heads 3 --kv-heads 1 --head-dim 128 --rope-dim 96 --ctx 131072"
compare phi4-f32 F32 "-c 256" $PHI4 --rope-factors 4096 --seed 51
greedy phi4-f32 1e-3 "-c 256"
compare phi4-f16 F16 "-c 256" $PHI4 --rope-factors 4096 --type f16 --seed 52
compare phi4-q8_0 QUANT "-c 256" $PHI4 --rope-factors 4096 --type q8_0 --seed 53
greedy phi4-q8_0 0.3 "-c 256"
# long factors: the context (256 for both) above the original (128)
compare phi4-long-f32 F32 "-c 256" $PHI4 --rope-factors 128 --seed 54
# Q4_K rows need widths of 256: 4 q heads on 2 kv heads
compare phi4-q4_k_m QUANT "-c 256" --arch phi3 --layers 4 --embd 512 --ff 512 --heads 4 --kv-heads 2 --head-dim 128 \
    --rope-dim 96 --ctx 131072 --rope-factors 4096 --type q4_k_m --seed 55
# Phi-3-mini-4k: 32 heads of 96, as many kv heads, whole heads rotate, no factors
PHI3="--arch phi3 --layers 4 --embd 384 --ff 512 --heads 4 --kv-heads 4 --head-dim 96 --ctx 4096"
compare phi3-f32 F32 "" $PHI3 --seed 56
compare phi3-q8_0 QUANT "" $PHI3 --type q8_0 --seed 57

# Ministral 3 3B (mistral3): llama's layers (26; 32 q heads on 8 kv heads
# of 128) with YaRN (factor 16 over 16384 positions, beta 32 and 1, log
# multiplier 1) and the attention temperature 0.1 per original context; here
# 4 layers, 4 q heads on 1, and an original context of 16 so that the
# 40-token prompt crosses two temperature steps and YaRN's ramp lies within
# the 64 pairs. Each of the two matters: without either, outside the class.
MIN3="--arch mistral3 --layers 4 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 128 --ctx 4096 --yarn 16 --yarn-orig 16 --yarn-log-mul 1"
compare mistral3-f32 F32 "" $MIN3 --attn-temp 0.1 --seed 91
greedy mistral3-f32 1e-3 ""
compare mistral3-q8_0 QUANT "" $MIN3 --attn-temp 0.1 --type q8_0 --seed 92
"$MK" "$TMP/mistral3-notemp.gguf" $MIN3 --seed 91 >/dev/null 2>&1
outside mistral3-f32 F32 "$TMP/mistral3-notemp.gguf" "without the attention temperature"
build/rel/tools/ggufedit "$TMP/mistral3-f32.gguf" "$TMP/mistral3-noyarn.gguf" --set-str mistral3.rope.scaling.type none \
    >/dev/null 2>&1 || not_ok "ggufedit: rope.scaling.type none"
outside mistral3-f32 F32 "$TMP/mistral3-noyarn.gguf" "without YaRN"
# YaRN on any architecture, with llama.cpp's defaults (Qwen3's 128k files:
# factor 4 over 32768; here over 16): no log multiplier, so the rotated
# values grow by 1 + 0.1 ln 4; as linear scaling, outside the class
compare qwen3-yarn4-f32 F32 "" --arch qwen3 --layers 4 --embd 256 --ff 512 --heads 4 --kv-heads 2 --head-dim 128 \
    --ctx 4096 --yarn 4 --yarn-orig 16 --seed 93
build/rel/tools/ggufedit "$TMP/qwen3-yarn4-f32.gguf" "$TMP/qwen3-linear4.gguf" --set-str qwen3.rope.scaling.type linear \
    >/dev/null 2>&1 || not_ok "ggufedit: rope.scaling.type linear"
outside qwen3-yarn4-f32 F32 "$TMP/qwen3-linear4.gguf" "linear scaling instead of YaRN"

# Gemma 3 (270M: 18 layers, 4 q heads on 1 kv head of 256, window 512,
# every sixth layer global; 1B: 26 layers, the same heads): 6 layers
# (windowed 0-4, global 5) with a window of 16 under the 40-token prompt,
# and the real window of 512 under a 600-token prompt (-c 1024: the rings
# of 512 + step - 1 rows wrap around).
GEMMA="--arch gemma3 --layers 6 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 256 --window 16"
compare gemma3-f16 F16 "" $GEMMA --type f16 --seed 71
compare gemma3-q8_0 QUANT "" $GEMMA --type q8_0 --seed 72
greedy gemma3-q8_0 0.3 ""
compare gemma3-q4_k_m QUANT "" $GEMMA --type q4_k_m --seed 73
# Gemma 3 4B-27B: linear RoPE scaling (rope.scaling.type linear, factor 8)
# on the global layers only, as llama.cpp applies it; the scaling matters:
# the same weights without it are outside the class of llama.cpp's logits.
compare gemma3-linear8-f16 F16 "" $GEMMA --rope-linear 8 --type f16 --seed 76
"$MK" "$TMP/gemma3-unscaled.gguf" $GEMMA --type f16 --seed 76 >/dev/null 2>&1
outside gemma3-linear8-f16 F16 "$TMP/gemma3-unscaled.gguf" "without the scaling"
# YaRN with windowed layers (no file has both) and unknown scalings are refused by name
build/rel/tools/ggufedit "$TMP/gemma3-linear8-f16.gguf" "$TMP/gemma3-yarn.gguf" --set-str gemma3.rope.scaling.type yarn \
    >/dev/null 2>&1 || not_ok "ggufedit: rope.scaling.type yarn"
if "$PITH" run "$TMP/gemma3-yarn.gguf" -p hi -n 1 >/dev/null 2>"$TMP/err"; then not_ok "gemma3 with yarn scaling: not refused"
elif grep -q "gemma3.rope.scaling.type 'yarn' with windowed layers is not supported" "$TMP/err"; then
    ok "gemma3 with yarn scaling: refused by name"
else not_ok "gemma3 with yarn scaling: $(head -c 300 "$TMP/err")"; fi
build/rel/tools/ggufedit "$TMP/gemma3-linear8-f16.gguf" "$TMP/gemma3-x.gguf" --set-str gemma3.rope.scaling.type dynamic \
    >/dev/null 2>&1 || not_ok "ggufedit: rope.scaling.type dynamic"
expect_fail2 "gemma3 with rope.scaling.type dynamic is refused" "$PITH" run "$TMP/gemma3-x.gguf" -p hi -n 1
# F32 weights: llama.cpp computes GELU through an F16 table, so its own
# logits move by ~1.3e-4 of the largest between a whole-prompt step and one
# token at a time on 6 such layers (rounding flips): the F32 class holds on
# 3 layers (pattern 3: two windowed, one global).
compare gemma3-3l-f32 F32 "" --arch gemma3 --layers 3 --swa-pattern 3 --embd 256 --ff 512 --heads 4 --kv-heads 1 \
    --head-dim 256 --window 16 --softcap 30 --seed 74
greedy gemma3-3l-f32 1e-3 ""
LONG=$(awk 'BEGIN { for (i = 0; i < 600; i++) printf "%s%d", i ? "," : "", (i * 7919 + 13) % 1200 + 3 }')
SAVED_IDS=$IDS IDS=$LONG
compare gemma3-window512-f16 F16 "-c 1024" --arch gemma3 --layers 6 --embd 256 --ff 512 --heads 4 --kv-heads 1 \
    --head-dim 256 --window 512 --ctx 2048 --type f16 --seed 75
IDS=$SAVED_IDS
# the plan counts the rings exactly: 5 windowed layers x (512 + 64 - 1) rows
# x 1 kv head x (256 + 256) F16 elements; the global layer n_ctx rows
"$PITH" run "$TMP/gemma3-window512-f16.gguf" -p hi --plan -c 2048 >"$TMP/plan" 2>&1
if grep -q "kv cache, windowed layers (ring) *2944000 bytes" "$TMP/plan" && grep -q "kv cache  *2097152 bytes" "$TMP/plan"; then
    ok "gemma3 --plan: rings of 575 rows for the windowed layers, 2048 for the global one"
else
    not_ok "gemma3 --plan: $(grep kv "$TMP/plan")"
fi
# a full context goes on: the kept tokens are fed again (rings cannot shift)
"$PITH" run "$TMP/gemma3-q8_0.gguf" --prompt-ids "$IDS" -n 60 -c 64 --temp 0 --ignore-eos --print-ids >"$TMP/out" 2>"$TMP/err"
if [ "$(tr ',' '\n' <"$TMP/out" | grep -c .)" -eq 60 ] && grep -q "context full: dropped .* fed the .* left again" "$TMP/err"; then
    ok "gemma3: a full context is shifted by feeding the kept tokens again, 60 tokens generated"
else
    not_ok "gemma3 context full: $(head -c 300 "$TMP/err")"
fi

# LFM2 (350M, 700M, 1.2B: 16 layers, short convolutions of 3 taps but the
# attention layers 2, 5, 8, 10, 12 and 14; 16/24/32 q heads on 8 kv heads
# of 64, q/k norms): that pattern, 4 q heads on 2 kv heads, width 256.
LFM="--arch lfm2 --layers 16 --embd 256 --ff 512 --heads 4 --kv-heads 2 --head-dim 64"
compare lfm2-f32 F32 "" $LFM --seed 81
greedy lfm2-f32 1e-3 ""
compare lfm2-f16 F16 "" $LFM --type f16 --untied --seed 82
compare lfm2-q8_0 QUANT "" $LFM --type q8_0 --seed 83
greedy lfm2-q8_0 0.3 ""
compare lfm2-q4_k_m QUANT "" $LFM --type q4_k_m --seed 84
# kernels of 5 taps (a state of 4 per channel, deeper than a step of 1 or 3)
compare lfm2-l5-f32 F32 "" $LFM --conv-l 5 --attn-layers 1,3 --layers 4 --seed 85
# LFM2.5's attention.sliding_window: every attention layer sees the last 8
# positions (rings), with the model's one RoPE base (llama.cpp ignores
# rope.freq_base_swa here, which mkmodel writes); without the window the
# same weights fall outside the class
compare lfm2-window8-f32 F32 "" $LFM --window 8 --seed 86
greedy lfm2-window8-f32 1e-3 ""
compare lfm2-window8-q8_0 QUANT "" $LFM --window 8 --type q8_0 --seed 87
"$MK" "$TMP/lfm2-nowindow.gguf" $LFM --seed 86 >/dev/null 2>&1
outside lfm2-window8-f32 F32 "$TMP/lfm2-nowindow.gguf" "without the window"
# the plan: rings of window + batch - 1 rows for the 6 attention layers
"$PITH" run "$TMP/lfm2-window8-f32.gguf" -p hi --plan -c 256 -b 32 >"$TMP/plan" 2>&1
if grep -q "kv cache, windowed layers (ring) *119808 bytes" "$TMP/plan" && ! grep -q "^  kv cache  " "$TMP/plan"; then
    ok "lfm2 window 8 --plan: rings of 39 rows for the 6 attention layers, no full cache"
else
    not_ok "lfm2 window 8 --plan: $(grep -E 'kv|conv' "$TMP/plan")"
fi
. tests/lfm2_lib.sh

# Qwen3.5-0.8B: 24 layers (attention in every fourth), 8 q heads on 2 kv
# heads of 256 (64 rotate), DeltaNet layers of 16 key and 16 value heads
# of 128; here 8 layers, 2 q heads on 1, 4 and 4 DeltaNet heads. The 9B
# has twice the value heads of the key heads (--ssm-kheads 2).
LONG=$(awk 'BEGIN { for (i = 0; i < 100; i++) printf "%s%d", i ? "," : "", (i * 7919 + 13) % 1200 + 3 }')
SAVED_IDS=$IDS IDS=$LONG
Q35="--arch qwen35 --layers 8 --embd 256 --ff 512 --heads 2 --kv-heads 1 --head-dim 256 --rope-dim 64"
compare qwen35-f32 F32 "" $Q35 --seed 81
greedy qwen35-f32 1e-3 ""
compare qwen35-kv2-f32 F32 "" $Q35 --ssm-kheads 2 --recurrent-layers --seed 82
compare qwen35-f16 F16 "" $Q35 --type f16 --untied --seed 83
compare qwen35-q8_0 QUANT "" $Q35 --type q8_0 --seed 84
greedy qwen35-q8_0 0.3 ""
compare qwen35-q4_k_m QUANT "" $Q35 --type q4_k_m --seed 85
# a file that keeps the multi-token prediction block (nextn_predict_layers 1,
# block_count 9, as llama.cpp's converter writes Qwen3.5 by default): the
# block is left unused, by llama.cpp as by pith; its trunk is qwen35-f32's
# (mkmodel writes the block last), so pith's logits are those bit for bit
compare qwen35-mtp-f32 F32 "" $Q35 --seed 81 --mtp 1 --recurrent-layers
if cmp -s "$TMP/qwen35-mtp-f32.f32" "$TMP/qwen35-f32.f32"; then
    ok "qwen35 with an MTP block: the trunk's logits, bit for bit"
else not_ok "qwen35 with an MTP block: logits differ from the same trunk without it"; fi
"$PITH" run "$TMP/qwen35-mtp-f32.gguf" -p hi --plan -c 256 >"$TMP/plan" 2>&1
"$PITH" run "$TMP/qwen35-f32.gguf" -p hi --plan -c 256 >"$TMP/plan0" 2>&1
if grep -q "^decision:" "$TMP/plan" && [ "$(grep -E '^  (kv|norm|layer|recurrent)' "$TMP/plan")" = "$(grep -E '^  (kv|norm|layer|recurrent)' "$TMP/plan0")" ]; then
    ok "qwen35 with an MTP block --plan: nothing planned for it (mapped, never read)"
else not_ok "qwen35 MTP --plan: $(grep -E '^  (kv|norm|layer|recurrent)|decision' "$TMP/plan" | head -c 300)"; fi
IDS=$SAVED_IDS
# the plan: a recurrent state per sequence (6 DeltaNet layers x (3 x 1536
# conv inputs + 4 heads x (128 x 128 + 1)) floats), a KV cache for the 2
# attention layers only (1 kv head x (256 + 256) F16 x 256 positions)
"$PITH" run "$TMP/qwen35-q8_0.gguf" -p hi --plan -c 256 >"$TMP/plan" 2>&1
if grep -q "recurrent state (deltanet layers) *1683584 bytes" "$TMP/plan" && grep -q "kv cache  *524288 bytes" "$TMP/plan"; then
    ok "qwen35 --plan: a recurrent state of 1.6 MiB, a KV cache for the 2 attention layers only"
else
    not_ok "qwen35 --plan: $(grep -E 'kv|recurrent' "$TMP/plan")"
fi
"$PITH" serve "$TMP/qwen35-q8_0.gguf" --plan -c 256 --slots 3 >"$TMP/plan" 2>&1
if [ "$(grep -c "recurrent state, sequence [0-2] *1683584 bytes" "$TMP/plan")" -eq 3 ]; then
    ok "qwen35 serve --slots 3 --plan: one recurrent state per slot"
else
    not_ok "qwen35 serve --slots 3 --plan: $(grep -E 'kv|recurrent' "$TMP/plan")"
fi
# --mem: the largest context that fits grows the 2 attention layers' cache
# only (2048 bytes a position), the recurrent state stays whole
"$MK" "$TMP/q35-4k.gguf" $Q35 --type q8_0 --ctx 4096 --seed 86 >/dev/null 2>&1
"$PITH" run "$TMP/q35-4k.gguf" -p hi -n 2 --plan -c 4096 --mem 34M --load mmap >"$TMP/plan" 2>&1
ctx=$(sed -n 's/^decision: --load mmap, context \([0-9]*\) (shrunk to fit)$/\1/p' "$TMP/plan")
if [ -n "$ctx" ] && [ "$ctx" -lt 4096 ] && grep -q "kv cache  *$((ctx * 2048)) bytes" "$TMP/plan" &&
        grep -q "recurrent state (deltanet layers) *1683584 bytes" "$TMP/plan"; then
    ok "qwen35 --mem 34M: context shrunk to $ctx, the KV cache of the attention layers with it, the state whole"
else
    not_ok "qwen35 --mem: $(grep -E 'kv|recurrent|decision' "$TMP/plan")"
fi
# a full context goes on: the kept tokens are fed again (a state cannot shift)
"$PITH" run "$TMP/qwen35-q8_0.gguf" --prompt-ids "$IDS" -n 60 -c 64 --temp 0 --ignore-eos --print-ids >"$TMP/out" 2>"$TMP/err"
if [ "$(tr ',' '\n' <"$TMP/out" | grep -c .)" -eq 60 ] && grep -q "context full: dropped .* fed the .* left again" "$TMP/err"; then
    ok "qwen35: a full context is shifted by feeding the kept tokens again, 60 tokens generated"
else
    not_ok "qwen35 context full: $(head -c 300 "$TMP/err")"
fi

# the three load modes and the q8_0 cache give the same greedy tokens on
# the fused matrices, the RoPE-less layers and the convolution states
for name in phi4-q8_0 smollm3-q8_0 gemma3-q8_0 lfm2-q8_0 qwen35-q8_0; do
    "$PITH" run "$TMP/$name.gguf" --prompt-ids "$IDS" --print-ids -n 8 --temp 0 --ignore-eos -c 256 >"$TMP/mmap.ids" 2>/dev/null
    for mode in read stream; do
        "$PITH" run "$TMP/$name.gguf" --prompt-ids "$IDS" --print-ids -n 8 --temp 0 --ignore-eos -c 256 --load $mode \
            >"$TMP/$mode.ids" 2>"$TMP/err"
        if [ -s "$TMP/mmap.ids" ] && cmp -s "$TMP/mmap.ids" "$TMP/$mode.ids"; then ok "$name --load $mode: the same tokens as mmap"
        else not_ok "$name --load $mode: $(cat "$TMP/$mode.ids") vs $(cat "$TMP/mmap.ids") $(head -c 200 "$TMP/err")"; fi
    done
    check "$name runs with --kv-type q8_0" "$PITH" run "$TMP/$name.gguf" --prompt-ids "$IDS" -n 4 --kv-type q8_0 -c 256
done

# what pith does not do, refused by name with one line
"$MK" "$TMP/smol-freqs.gguf" $SMOL --rope-freqs >/dev/null 2>&1
expect_fail2 "smollm3 with rope_freqs.weight (llama.cpp ignores it) is refused" "$PITH" run "$TMP/smol-freqs.gguf" -p hi
"$MK" "$TMP/phi-bias.gguf" $PHI3 --bias >/dev/null 2>&1
expect_fail2 "phi3 with biases is refused" "$PITH" run "$TMP/phi-bias.gguf" -p hi
"$MK" "$TMP/llama-rot.gguf" --arch llama --rope-dim 8 >/dev/null 2>&1
expect_fail2 "llama rotating part of a head is still refused" "$PITH" run "$TMP/llama-rot.gguf" -p hi
"$MK" "$TMP/q35-pattern.gguf" $Q35 --full-attn 3 --recurrent-layers >/dev/null 2>&1
check "qwen35 with attention.recurrent_layers matching the interval runs" "$PITH" run "$TMP/q35-pattern.gguf" -p hi -n 2
# the edited files are data: the release ggufedit writes the same bytes
# (t_robust.sh runs the ASan one)
ED=${ED:-build/rel/tools/ggufedit}
Q35F=$TMP/qwen35-f32.gguf
"$ED" "$Q35F" "$TMP/q35-nextn.gguf" --set-u32 qwen35.nextn_predict_layers 8 >/dev/null 2>&1
expect_fail2 "qwen35 whose multi-token prediction layers are all its blocks is refused" "$PITH" run "$TMP/q35-nextn.gguf" -p hi
"$ED" "$TMP/smollm3-f32.gguf" "$TMP/smol-nextn.gguf" --set-u32 smollm3.nextn_predict_layers 1 >/dev/null 2>&1
expect_fail2 "smollm3 with multi-token prediction layers is refused" "$PITH" run "$TMP/smol-nextn.gguf" -p hi
"$ED" "$TMP/q35-pattern.gguf" "$TMP/q35-pattern-bad.gguf" --set-u32 qwen35.full_attention_interval 4 >/dev/null 2>&1
expect_fail2 "qwen35 whose attention.recurrent_layers is not the interval's pattern is refused" "$PITH" run "$TMP/q35-pattern-bad.gguf" -p hi
"$ED" "$Q35F" "$TMP/q35-sections.gguf" --shrink-array qwen35.rope.dimension_sections 1 >/dev/null 2>&1
expect_fail2 "qwen35 with RoPE pairs outside the text sections is refused" "$PITH" run "$TMP/q35-sections.gguf" -p hi
"$ED" "$Q35F" "$TMP/q35-nosec.gguf" --drop-key qwen35.rope.dimension_sections >/dev/null 2>&1
expect_fail2 "qwen35 without rope.dimension_sections is refused" "$PITH" run "$TMP/q35-nosec.gguf" -p hi
"$ED" "$Q35F" "$TMP/q35-noconv.gguf" --drop-key qwen35.ssm.conv_kernel >/dev/null 2>&1
expect_fail2 "qwen35 without ssm.conv_kernel is refused" "$PITH" run "$TMP/q35-noconv.gguf" -p hi
"$ED" "$Q35F" "$TMP/q35-noa.gguf" --drop-tensor blk.0.ssm_a >/dev/null 2>&1
expect_fail2 "qwen35 without blk.0.ssm_a is refused" "$PITH" run "$TMP/q35-noa.gguf" -p hi
finish

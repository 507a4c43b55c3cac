#!/bin/sh
# t_llamacpp_moe.sh - mixtures of experts against llama.cpp itself (npm's
# node-llama-cpp, as tests/t_llamacpp_arch.sh, whose compare() this follows;
# greedy() is llamacpp_lib.sh's): random models made by mkmodel at the real
# models' head sizes with fewer, narrower experts, in F32, F16, Q8_0 and
# Q4_K_M; logits of every position of a 40-token prompt fed in one step, in
# steps of 7 and one token at a time, compared by cmplogits with the
# fixtures' tolerance classes (README section 6 of the fixtures); greedy
# continuations; the routing shown to matter.
#   qwen3moe  Qwen3-30B-A3B: heads of 128 (32 q on 4 kv), 128 experts of
#             768 of which 8 are used, softmax, weights normalised; here 8
#             experts of 256, 2 used (and 16, 4 used)
#   lfm2moe   LFM2-8B-A1B: lfm2's short convolutions and attention layers
#             (heads of 64), the first 2 layers' FFN dense, then 32 experts
#             of 1792, 4 used, sigmoid gating plus a selection bias,
#             weights normalised; here 16 experts of 256, 4 used
#   qwen35moe Qwen3.5-35B-A3B: qwen35's DeltaNet and gated attention layers,
#             every FFN 256 experts of 512 (8 used, softmax, normalised)
#             plus a shared expert of 512 weighed by a sigmoid gate; here
#             8 experts of 256, 2 used, a shared expert of 256
. tests/lib.sh
MK=${MK:-build/rel/tools/mkmodel}
CMP=${CMP:-build/rel/tools/cmplogits}
ED=${ED:-build/rel/tools/ggufedit}
# the logits and greedy runs are arithmetic: the release pith (test_forward
# runs the three architectures' stages under ASan and UBSan; the plans and refusals below
# stay on the ASan pith)
FWD=${FWD:-./pith}
[ -x "$FWD" ] || not_ok "$FWD is not built (make pith)"
if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
else not_ok "$(cat "$TMP/install.err")"; finish; fi
. tests/llamacpp_lib.sh

IDS=5,80,300,17,250,9,120,66,200,31,4,77,1000,3,420,99,12,640,8,250,711,42,93,508,61,333,7,880,145,26,999,58,402,13,777,230,64,519,88,150

# refused NAME WORDS COMMAND...: one line, status 2, saying WORDS
refused() {
    name=$1 words=$2; shift 2
    expect_fail2 "$name" "$@"
    grep -q "$words" "$TMP/err" || not_ok "$name: not for the reason expected ($words): $(head -c 200 "$TMP/err")"
}


# Qwen3-30B-A3B: 48 layers, 32 q heads on 4 kv heads of 128, 128 experts
# of 768 (8 used); here 4 layers, 4 on 1, 8 experts of 256 (2 used).
# A random router has near-ties: where the two experts at the top-k
# boundary are closer than the quantization noise between the engines
# (about 1% of a token's router logits), either may be chosen, as argmax
# near-ties flip in greedy runs; with 4 layers of top-2 of 8 that happened
# at one position of 40 for most Q8_0 seeds (mean KL ~6e-4, one position's
# KL ~1.5e-2; with every expert used, no choice, 1.7e-4 at most). Seed 99
# of Q8_0 has no such tie; F32 and F16 have none at all.
Q3M="--arch qwen3moe --layers 4 --embd 256 --ff 512 --ff-exp 256 --experts 8 --experts-used 2 --heads 4 --kv-heads 1 --head-dim 128"
compare qwen3moe-f32 F32 $Q3M --seed 91
greedy qwen3moe-f32 1e-3
compare qwen3moe-f16 F16 $Q3M --type f16 --untied --seed 92
compare qwen3moe-q8_0 QUANT $Q3M --type q8_0 --seed 99
greedy qwen3moe-q8_0 0.3
# Q4_K rows need widths of 256; 16 experts, 4 used
compare qwen3moe-q4_k_m QUANT --arch qwen3moe --layers 4 --embd 256 --ff 1024 --ff-exp 256 --experts 16 --experts-used 4 \
    --heads 4 --kv-heads 2 --head-dim 128 --type q4_k_m --seed 94
# the routing matters: the same weights with another top-k are far from
# llama.cpp's logits (llama.cpp fixes softmax and normalised weights for
# qwen3moe: no key to turn them off)
"$ED" "$TMP/qwen3moe-f32.gguf" "$TMP/q3m-top3.gguf" --set-u32 qwen3moe.expert_used_count 3 >/dev/null 2>&1
outside qwen3moe-f32 F32 "$TMP/q3m-top3.gguf" "3 experts a token instead of 2"

# memory: mapped, the plan counts the active experts (2 of 8) of the
# experts' bytes, the rest of the file whole
Q8=$TMP/qwen3moe-q8_0.gguf
"$PITH" run "$Q8" -p hi --plan -c 256 >"$TMP/plan" 2>&1
size=$(wc -c <"$Q8")
experts=$("$PITH" inspect "$Q8" --tensors | awk '$1 ~ /_exps\.weight$/ { s += $NF } END { print s }')
want=$((size - experts + experts / 8 * 2))
if grep -q "model file, memory-mapped  *$want bytes .*the active experts (2 of 8)" "$TMP/plan"; then
    ok "qwen3moe --plan: the mapped file counts 2 of 8 experts ($want of $size bytes)"
else
    not_ok "qwen3moe --plan: want $want bytes mapped: $(grep 'model file' "$TMP/plan")"
fi
# the three load modes give the same logits (stream reads every expert of
# a layer per step; read copies them all); a q8_0 cache runs
"$FWD" logits "$Q8" --prompt-ids "$IDS" --out "$TMP/mmap.f32" -b 7 >/dev/null 2>&1
for mode in read stream; do
    "$FWD" logits "$Q8" --prompt-ids "$IDS" --out "$TMP/$mode.f32" -b 7 --load $mode >/dev/null 2>"$TMP/err"
    if [ -s "$TMP/mmap.f32" ] && cmp -s "$TMP/mmap.f32" "$TMP/$mode.f32"; then ok "qwen3moe --load $mode: the same logits as mmap"
    else not_ok "qwen3moe --load $mode: $(head -c 200 "$TMP/err")"; fi
done
check "qwen3moe runs with --kv-type q8_0" "$PITH" run "$Q8" --prompt-ids "$IDS" -n 4 --kv-type q8_0 -c 256

# LFM2-8B-A1B: 24 layers (6 attention), 32 q heads on 8 kv heads of 64,
# layers 0-1 dense; here 6 layers (attention in 2 and 5), 4 q heads on 2.
# Quantized: near-ties of the random routers (above) are far more frequent
# with top-4 of 16 sigmoids and lfm2's larger noise (every Q8_0 seed tried
# flipped an expert somewhere, even F16 seed 112 once): the quantized
# files use all their experts (4 of 4: the weighing, the experts' matrices
# and their quantized inputs, no choice to flip); F32 and F16 choose.
LFM="--arch lfm2moe --layers 6 --attn-layers 2,5 --dense-lead 2 --embd 256 --ff 512 --ff-exp 256 --heads 4 --kv-heads 2 --head-dim 64"
compare lfm2moe-f32 F32 $LFM --experts 16 --experts-used 4 --seed 101
greedy lfm2moe-f32 1e-3
compare lfm2moe-f16 F16 $LFM --experts 16 --experts-used 4 --type f16 --untied --seed 111
compare lfm2moe-q8_0 QUANT $LFM --experts 4 --experts-used 4 --type q8_0 --seed 103
compare lfm2moe-q4_k_m QUANT $LFM --experts 4 --experts-used 4 --type q4_k_m --seed 113
# the gating matters: softmax instead of the file's sigmoid
"$ED" "$TMP/lfm2moe-f32.gguf" "$TMP/lfm2moe-softmax.gguf" --set-u32 lfm2moe.expert_gating_func 1 >/dev/null 2>&1
outside lfm2moe-f32 F32 "$TMP/lfm2moe-softmax.gguf" "softmax gating instead of sigmoid"
"$ED" "$TMP/lfm2moe-f32.gguf" "$TMP/lfm2moe-g3.gguf" --set-u32 lfm2moe.expert_gating_func 3 >/dev/null 2>&1
refused "lfm2moe with an unknown gating function is refused" "expert_gating_func = 3" "$PITH" run "$TMP/lfm2moe-g3.gguf" -p hi
"$PITH" run "$TMP/lfm2moe-f32.gguf" -p hi --plan -c 256 >"$TMP/plan" 2>&1
if grep -q "model file, memory-mapped .*the active experts (4 of 16)" "$TMP/plan"; then ok "lfm2moe --plan: 4 of 16 experts"
else not_ok "lfm2moe --plan: $(grep 'model file' "$TMP/plan")"; fi

# Qwen3.5-35B-A3B: 40 layers (attention every fourth), 16 q heads on 2 kv
# heads of 256 (64 rotate), DeltaNet layers of 16 key and 32 value heads of
# 128; here 4 layers, 2 q heads on 1, 4 and 4 DeltaNet heads (longer
# prompts than llama.cpp's DeltaNet chunk: t_llamacpp_arch.sh's qwen35).
# The expert code is qwen3moe's, checked in every type above: here F32
# and Q4_K_M, which uses every expert, as lfm2moe (the shared expert runs
# either way).
Q35M="--arch qwen35moe --layers 4 --embd 256 --ff 256 --ff-exp 256 --heads 2 --kv-heads 1 --head-dim 256 --rope-dim 64"
compare qwen35moe-f32 F32 $Q35M --experts 8 --experts-used 2 --seed 121
greedy qwen35moe-f32 1e-3
compare qwen35moe-q4_k_m QUANT $Q35M --experts 4 --experts-used 4 --type q4_k_m --seed 124
"$ED" "$TMP/qwen35moe-f32.gguf" "$TMP/q35m-top3.gguf" --set-u32 qwen35moe.expert_used_count 3 >/dev/null 2>&1
outside qwen35moe-f32 F32 "$TMP/q35m-top3.gguf" "3 experts a token instead of 2"

# broken files, refused with one line
"$ED" "$Q8" "$TMP/q3m-k9.gguf" --set-u32 qwen3moe.expert_used_count 9 >/dev/null 2>&1
refused "qwen3moe using more experts than it has is refused" "expert_used_count = 9" "$PITH" run "$TMP/q3m-k9.gguf" -p hi
"$ED" "$Q8" "$TMP/q3m-nocount.gguf" --drop-key qwen3moe.expert_count >/dev/null 2>&1
refused "qwen3moe without expert_count is refused" "expert_count = 0" "$PITH" run "$TMP/q3m-nocount.gguf" -p hi
"$ED" "$Q8" "$TMP/q3m-e16.gguf" --set-u32 qwen3moe.expert_count 16 >/dev/null 2>&1
refused "qwen3moe whose experts' tensors are not expert_count deep is refused" "expected \[256, 16\]" "$PITH" run "$TMP/q3m-e16.gguf" -p hi
finish

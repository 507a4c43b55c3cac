#!/bin/sh
# cross_llamacpp_arch.sh - the ARM builds (make dist) on the architectures of
# issue 16 under qemu-user, against llama.cpp's logits computed on this
# machine (node-llama-cpp, as tests/t_llamacpp_arch.sh): one F32 and one
# quantized random model each, the whole 40-token prompt in one step (qwen35:
# 100 tokens in steps of 64, past the DeltaNet chunk) and one token at a
# time, on cortex-a76 (dotprod), cortex-a53, cortex-a7 (armv7 NEON) and
# arm1176 (armv6). Slow (minutes); not part of make test:
#   make dist && sh tests/cross_llamacpp_arch.sh
# Gemma 3 is checked with F16 and Q4_K_M weights: with F32 weights the
# NEON paths' other summation order meets llama.cpp's F16 GELU table
# rounding (docs/models.md) at 1.2e-4 of the largest logit on 3 layers.
. tests/lib.sh
MK=${MK:-build/asan/tools/mkmodel}
CMP=${CMP:-build/asan/tools/cmplogits}
NODE_DIR=build/node-llama-cpp
sh tests/llamacpp/install.sh || { not_ok "node-llama-cpp"; finish; }
IDS=5,80,300,17,250,9,120,66,200,31,4,77,1000,3,420,99,12,640,8,250,711,42,93,508,61,333,7,880,145,26,999,58,402,13,777,230,64,519,88,150

model() { # NAME CLASS "PITH ARGS" MKMODEL ARGS...
    name=$1 class=$2 pargs=$3; shift 3
    "$MK" "$TMP/$name.gguf" "$@" >/dev/null 2>&1 &&
        node "$NODE_DIR/logits.mjs" "$TMP/$name.gguf" "$IDS" "$TMP/$name.ref" >/dev/null 2>&1 ||
        { not_ok "$name: mkmodel or llama.cpp failed"; return; }
    for target in "qemu-aarch64-static cortex-a76 aarch64-linux-musl" "qemu-aarch64-static cortex-a53 aarch64-linux-musl" \
                  "qemu-arm-static cortex-a7 armv7-linux-musleabihf" "qemu-arm-static arm1176 armv6-linux-musleabi"; do
        set -- $target
        for b in 64 1; do
            # shellcheck disable=SC2086
            if $1 -cpu $2 "dist/pith-$3" logits "$TMP/$name.gguf" --prompt-ids "$IDS" --out "$TMP/out.f32" --kv-type f32 \
                    -b $b -t 1 $pargs 2>"$TMP/err" &&
                "$CMP" --ref "$TMP/$name.ref" --class "$class" --vocab 1266 "$TMP/out.f32" >"$TMP/cmp" 2>&1; then
                ok "$name $2 -b $b: $(sed 's/^[^ ]* //' "$TMP/cmp")"
            else
                not_ok "$name $2 -b $b: $(cat "$TMP/cmp") $(head -c 200 "$TMP/err")"
            fi
        done
    done
}
SMOL="--arch smollm3 --layers 8 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 128"
model smollm3-f32 F32 "" $SMOL --seed 41
model smollm3-q4_k_m QUANT "" $SMOL --type q4_k_m --seed 44
PHI4="--arch phi3 --layers 4 --embd 384 --ff 512 --heads 3 --kv-heads 1 --head-dim 128 --rope-dim 96 --ctx 131072"
model phi4-f32 F32 "-c 256" $PHI4 --rope-factors 4096 --seed 51
model phi4-q8_0 QUANT "-c 256" $PHI4 --rope-factors 4096 --type q8_0 --seed 53
GEMMA="--arch gemma3 --layers 6 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 256 --window 16"
model gemma3-f16 F16 "" $GEMMA --type f16 --seed 71
model gemma3-q4_k_m QUANT "" $GEMMA --type q4_k_m --seed 73
model gemma3-linear8-f16 F16 "" $GEMMA --rope-linear 8 --type f16 --seed 76
# Gemma 4 as t_llamacpp_gemma4.sh: heads of 256 and 512, KV shared by the
# last layers, per-layer embeddings
G4="--arch gemma4 --layers 10 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 512 --head-dim-swa 256 --window 16
    --shared-kv 5 --pe 256 --rope-partial 4 --double-wide"
model gemma4-f16 F16 "" $G4 --type f16 --seed 141
model gemma4-q4_k_m QUANT "" $G4 --type q4_k_m --seed 143
# Ministral 3 (YaRN, attention temperature), as t_llamacpp_arch.sh
MIN3="--arch mistral3 --layers 4 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 128 --ctx 4096 --yarn 16 --yarn-orig 16 --yarn-log-mul 1 --attn-temp 0.1"
model mistral3-f32 F32 "" $MIN3 --seed 91
model mistral3-q4_k_m QUANT "" $MIN3 --type q4_k_m --seed 94
LFM="--arch lfm2 --layers 16 --embd 256 --ff 512 --heads 4 --kv-heads 2 --head-dim 64"
model lfm2-f32 F32 "" $LFM --seed 81
model lfm2-q4_k_m QUANT "" $LFM --type q4_k_m --seed 84
model lfm2-window8-f32 F32 "" $LFM --window 8 --seed 86
# mixtures of experts as t_llamacpp_moe.sh (the experts through every set's kernels)
Q3M="--arch qwen3moe --layers 4 --embd 256 --ff 512 --ff-exp 256 --experts 8 --experts-used 2 --heads 4 --kv-heads 1 --head-dim 128"
model qwen3moe-f32 F32 "" $Q3M --seed 91
model qwen3moe-q8_0 QUANT "" $Q3M --type q8_0 --seed 99
model qwen3moe-q4_k_m QUANT "" --arch qwen3moe --layers 4 --embd 256 --ff 1024 --ff-exp 256 --experts 16 --experts-used 4 \
    --heads 4 --kv-heads 2 --head-dim 128 --type q4_k_m --seed 94
LFMM="--arch lfm2moe --layers 6 --attn-layers 2,5 --dense-lead 2 --embd 256 --ff 512 --ff-exp 256 --heads 4 --kv-heads 2 --head-dim 64"
model lfm2moe-f32 F32 "" $LFMM --experts 16 --experts-used 4 --seed 101
model lfm2moe-q4_k_m QUANT "" $LFMM --experts 4 --experts-used 4 --type q4_k_m --seed 113
Q35M="--arch qwen35moe --layers 4 --embd 256 --ff 256 --ff-exp 256 --heads 2 --kv-heads 1 --head-dim 256 --rope-dim 64"
model qwen35moe-f32 F32 "" $Q35M --experts 8 --experts-used 2 --seed 121
model qwen35moe-q4_k_m QUANT "" $Q35M --experts 4 --experts-used 4 --type q4_k_m --seed 124
# Qwen3.5 as t_llamacpp_arch.sh: a prompt of 100 tokens, longer than the
# DeltaNet chunk of 64
IDS=$(awk 'BEGIN { for (i = 0; i < 100; i++) printf "%s%d", i ? "," : "", (i * 7919 + 13) % 1200 + 3 }')
Q35="--arch qwen35 --layers 8 --embd 256 --ff 512 --heads 2 --kv-heads 1 --head-dim 256 --rope-dim 64"
model qwen35-f32 F32 "" $Q35 --seed 81
model qwen35-q4_k_m QUANT "" $Q35 --type q4_k_m --seed 85
finish

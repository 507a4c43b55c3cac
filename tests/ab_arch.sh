#!/bin/sh
# ab_arch.sh OLD_PITH NEW_PITH - a developer tool (not part of `make test`),
# ab_logits.sh's companion for the architectures the fixtures do not have:
# do two pith binaries compute the same bits on random models of every
# architecture (made here by mkmodel, in the shapes of tests/t_llamacpp*.sh
# but smaller)?
#   qwen3, llama     q4_k_m (activations in Q8_K blocks), 2 kv heads
#   qwen2            biases on q, k, v; q8_0
#   smollm3          no RoPE in every fourth layer; one kv head; q8_0
#   phi3             Phi-4-mini's fused q/k/v and gate/up, 96 of 128
#                    elements rotate, LongRoPE factors; f16
#   gemma3           sliding-window layers (rings of window + step - 1
#                    rows, shorter than the prompt at -b 7 and 1) and a
#                    global one, post-norms, GELU, a logit softcap; q8_0
#   lfm2             short convolutions around attention layers; q8_0, f32
#   qwen35           gated DeltaNet layers and a gated attention layer;
#                    q8_0, q4_k_m
# For each model, a 40-token prompt (100 for qwen35: its chunked recurrence)
#     pith logits MODEL --prompt-ids IDS --out FILE -c 256 -b B -t T --load L --kv-type K
# over B in 64, 7, 1; T in 1, 2; L in mmap, read, stream; K in f32, f16,
# q8_0; with both binaries, the two files compared byte for byte (cmp).
# One ok/not ok line per comparison, then a summary; exit status 1 when any
# differs or fails.
#
# Environment: MK (default build/rel/tools/mkmodel), AB_FILTER (only the
# models whose name matches this grep -E pattern).
. "$(dirname "$0")/ab_lib.sh"
MK=${MK:-build/rel/tools/mkmodel}
[ -x "$MK" ] || { echo "$0: $MK: not built (make $MK)" >&2; exit 2; }

# 40 and 100 prompt ids below the self-made vocabulary's size (1266)
IDS=$(awk 'BEGIN { for (i = 0; i < 40; i++) printf "%s%d", i ? "," : "", (i * 7919 + 13) % 1200 + 3 }')
LONG=$(awk 'BEGIN { for (i = 0; i < 100; i++) printf "%s%d", i ? "," : "", (i * 7919 + 13) % 1200 + 3 }')

# model NAME IDS MKMODEL_ARGS...: one model, every combination.
model() {
    mname=$1 ids=$2
    shift 2
    [ -n "${AB_FILTER:-}" ] && ! echo "$mname" | grep -Eq "$AB_FILTER" && return
    m=$TMP/$mname.gguf
    if ! "$MK" "$m" "$@" >"$TMP/mk.out" 2>&1; then not_ok "$mname: mkmodel failed: $(head -c 300 "$TMP/mk.out")"; return; fi
    for load in mmap read stream; do
        for kv in f32 f16 q8_0; do
            for t in 1 2; do
                for b in 64 7 1; do
                    ab "$mname --load $load --kv-type $kv -t $t -b $b" 1 logits "$m" --prompt-ids "$ids" -c 256 --load $load \
                        --kv-type $kv -t $t -b $b
                done
            done
        done
    done
    rm -f "$m"
}

start=$(date +%s)
echo "# old: $OLD"
echo "# new: $NEW"
model qwen3-q4_k_m "$IDS" --arch qwen3 --layers 3 --embd 256 --ff 512 --heads 4 --kv-heads 2 --head-dim 64 \
    --type q4_k_m --seed 11
model llama-q4_k_m "$IDS" --arch llama --layers 3 --embd 256 --ff 512 --heads 4 --kv-heads 2 --head-dim 64 \
    --type q4_k_m --seed 12
model qwen2-q8_0 "$IDS" --arch qwen2 --layers 3 --embd 128 --ff 256 --heads 4 --kv-heads 2 --head-dim 32 \
    --type q8_0 --seed 13
model smollm3-q8_0 "$IDS" --arch smollm3 --layers 4 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 64 \
    --type q8_0 --seed 14
model phi4-f16 "$IDS" --arch phi3 --layers 2 --embd 384 --ff 512 --heads 3 --kv-heads 1 --head-dim 128 \
    --rope-dim 96 --ctx 131072 --rope-factors 4096 --type f16 --seed 15
model gemma3-q8_0 "$IDS" --arch gemma3 --layers 3 --swa-pattern 3 --embd 256 --ff 512 --heads 4 --kv-heads 2 \
    --head-dim 64 --window 16 --softcap 30 --type q8_0 --seed 16
model lfm2-q8_0 "$IDS" --arch lfm2 --layers 4 --attn-layers 1,3 --embd 256 --ff 512 --heads 4 --kv-heads 2 \
    --head-dim 64 --type q8_0 --seed 17
model lfm2-f32 "$IDS" --arch lfm2 --layers 3 --attn-layers 1 --embd 128 --ff 256 --heads 4 --kv-heads 2 \
    --head-dim 32 --conv-l 5 --seed 18
model qwen35-q8_0 "$LONG" --arch qwen35 --layers 4 --embd 256 --ff 512 --heads 2 --kv-heads 1 --head-dim 256 \
    --rope-dim 64 --type q8_0 --seed 19
model qwen35-q4_k_m "$LONG" --arch qwen35 --layers 4 --embd 256 --ff 512 --heads 2 --kv-heads 1 --head-dim 256 \
    --rope-dim 64 --ssm-kheads 2 --recurrent-layers --type q4_k_m --seed 20
echo "# $passed identical, $failed different or failed, in $(($(date +%s) - start)) s"
[ $failed -eq 0 ]

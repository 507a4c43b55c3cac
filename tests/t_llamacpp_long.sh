#!/bin/sh
# t_llamacpp_long.sh - attention over a long prompt (issue 37: tiles of keys
# with an online softmax, kernels.h: kern_attention) against llama.cpp
# itself (npm's node-llama-cpp, F32 KV cache, as tests/t_llamacpp_arch.sh):
# a random Qwen3-shaped model (mkmodel: 4 q heads on 2 kv heads of 128, two
# layers) and a 900-token prompt, whose queries cross 15 blocks of 64 keys
# and tiles of 32 tokens; its logits of every position in steps of 512 (two
# steps), of 64 and of one token, compared by cmplogits with the fixtures'
# classes (README section 6): an F32 cache in the F32 class, an F16 cache in
# the F16 class, a Q8_0 cache in the QUANT class (t_kv_q8_0.sh); and every
# step size's logits the same bits as the one-token steps'. (Gemma 3's
# windows of 512 under a 600-token prompt: t_llamacpp_arch.sh.)
. tests/lib.sh
# the models are data and the logits arithmetic: the release mkmodel,
# cmplogits and pith, as t_llamacpp_arch.sh (test_kernels_attention runs
# the tiles under ASan and UBSan)
MK=${MK:-build/rel/tools/mkmodel}
CMP=${CMP:-build/rel/tools/cmplogits}
FWD=${FWD:-./pith}
[ -x "$FWD" ] || not_ok "$FWD is not built (make pith)"
if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
else not_ok "$(cat "$TMP/install.err")"; finish; fi
. tests/llamacpp_lib.sh

IDS=$(awk 'BEGIN { for (i = 0; i < 900; i++) printf "%s%d", i ? "," : "", (i * 7919 + 13) % 1200 + 3 }')
model=$TMP/long.gguf
if ! "$MK" "$model" --arch qwen3 --layers 2 --embd 256 --ff 512 --heads 4 --kv-heads 2 --head-dim 128 --ctx 2048 \
        --seed 37 >"$TMP/mk.out" 2>&1; then
    not_ok "mkmodel failed: $(head -c 300 "$TMP/mk.out")"; finish
fi
ref_logits "$model" "$IDS" "$TMP/ref.f32" || { not_ok "llama.cpp failed: $(tail -c 300 "$TMP/ref.err")"; finish; }
vocab=$("$FWD" inspect "$model" --tensors | awk '$1 == "token_embd.weight" { print $4 }')
for kv in f32:F32 f16:F16 q8_0:QUANT; do
    t=${kv%:*} class=${kv#*:}
    for b in 1 64 512; do
        if ! "$FWD" logits "$model" --prompt-ids "$IDS" --out "$TMP/$t-$b.f32" --kv-type "$t" -b $b -c 1024 \
                >"$TMP/out" 2>"$TMP/err"; then
            not_ok "--kv-type $t -b $b: pith failed: $(head -c 300 "$TMP/err")"; continue
        fi
        if [ $b -eq 1 ]; then
            if "$CMP" --ref "$TMP/ref.f32" --class "$class" --vocab "$vocab" "$TMP/$t-1.f32" >"$TMP/cmp" 2>&1; then
                ok "900 tokens, --kv-type $t, one at a time, vs llama.cpp: $(sed 's/^[^ ]* //' "$TMP/cmp")"
            else
                not_ok "900 tokens, --kv-type $t, one at a time, vs llama.cpp: $(cat "$TMP/cmp")"
            fi
        elif cmp -s "$TMP/$t-$b.f32" "$TMP/$t-1.f32"; then
            ok "900 tokens, --kv-type $t, steps of $b: the one-token steps' logits, bit for bit"
        else
            not_ok "900 tokens, --kv-type $t, steps of $b: logits differ from the one-token steps'"
        fi
    done
done
finish

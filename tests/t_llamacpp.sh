#!/bin/sh
# t_llamacpp.sh - the architectures and variants the fixtures have no case
# for (qwen2's q/k/v biases, llama's rope_freqs.weight and optional biases,
# untied outputs) checked against llama.cpp itself: random models made by
# mkmodel, logits of every prompt position computed by llama.cpp (npm's
# node-llama-cpp@3.22.1, its prebuilt llama.cpp v0.5.0, installed here from
# the npm registry into build/node-llama-cpp) and by pith, compared with
# the fixtures' measures and tolerance classes (README section 6 of the
# fixtures) by cmplogits. pith runs with an F32 KV cache, like the reference.
. tests/lib.sh
# the models are data: the release mkmodel writes the same bytes, faster
# (t_inspect.sh runs the ASan one)
MK=${MK:-build/rel/tools/mkmodel}
# the comparison is arithmetic on data: the release cmplogits gives the same
# verdicts (t_logits.sh runs the ASan one)
CMP=${CMP:-build/rel/tools/cmplogits}
NODE_DIR=build/node-llama-cpp
if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
else not_ok "$(cat "$TMP/install.err")"; finish; fi
. tests/llamacpp_lib.sh

IDS=5,80,300,17,250,9,120,66,200,31,4,77,1000,3,420,99,12,640,8,250
SHAPE="--layers 3 --embd 64 --ff 160 --heads 4 --kv-heads 2 --head-dim 16"

# compare NAME CLASS MKMODEL_ARGS...: one model, pith in three batch shapes
# (whole prompt in one step, steps of 7, one token at a time) against llama.cpp.
compare() {
    name=$1 class=$2; shift 2
    model=$TMP/$name.gguf
    if ! "$MK" "$model" $SHAPE "$@" >"$TMP/mk.out" 2>&1; then not_ok "$name: mkmodel failed: $(head -c 300 "$TMP/mk.out")"; return; fi
    if ! ref_logits "$model" "$IDS" "$TMP/$name.ref.f32"; then
        not_ok "$name: llama.cpp failed: $(tail -c 300 "$TMP/ref.err")"; return
    fi
    vocab=$("$PITH" inspect "$model" --tensors | awk '$1 == "token_embd.weight" { print $4 }')
    for b in 64 7 1; do
        if ! "$PITH" logits "$model" --prompt-ids "$IDS" --out "$TMP/$name.f32" --kv-type f32 -b $b >"$TMP/out" 2>"$TMP/err"; then
            not_ok "$name -b $b: pith failed: $(head -c 300 "$TMP/err")"; continue
        fi
        if "$CMP" --ref "$TMP/$name.ref.f32" --class "$class" --vocab "$vocab" "$TMP/$name.f32" >"$TMP/cmp" 2>&1; then
            ok "$name -b $b vs llama.cpp: $(sed 's/^[^ ]* //' "$TMP/cmp")"
        else
            not_ok "$name -b $b vs llama.cpp: $(cat "$TMP/cmp")"
        fi
    done
}

compare qwen2-f32 F32 --arch qwen2 --seed 21
compare qwen2-f16-untied F16 --arch qwen2 --type f16 --untied --seed 22
compare qwen2-q8_0 QUANT --arch qwen2 --type q8_0 --embd 128 --head-dim 32 --seed 23
compare llama-rope-freqs-f32 F32 --arch llama --rope-freqs --seed 24
compare llama-rope-freqs-q4_k_m QUANT --arch llama --rope-freqs --type q4_k_m --embd 256 --ff 512 --head-dim 64 --seed 25
compare llama-bias-untied-f32 F32 --arch llama --bias --untied --seed 26
compare llama-f32 F32 --arch llama --seed 27
compare qwen3-f32 F32 --arch qwen3 --seed 28

# what llama.cpp refuses, pith refuses too, with one line
"$MK" "$TMP/rot.gguf" $SHAPE --arch qwen2 --rope-dim 8 >/dev/null 2>&1
expect_fail2 "qwen2 rotating part of a head is refused" "$PITH" run "$TMP/rot.gguf" -p hi
"$MK" "$TMP/qwen3-bias.gguf" $SHAPE --arch qwen3 --bias >/dev/null 2>&1
expect_fail2 "qwen3 with biases is refused" "$PITH" run "$TMP/qwen3-bias.gguf" -p hi
"$MK" "$TMP/qwen2-freqs.gguf" $SHAPE --arch qwen2 --rope-freqs >/dev/null 2>&1
expect_fail2 "qwen2 with rope_freqs.weight is refused" "$PITH" run "$TMP/qwen2-freqs.gguf" -p hi
finish

/* moe.h - a mixture of experts in place of a layer's dense FFN (Qwen3-MoE,
 * LFM2-MoE), as llama.cpp's build_moe_ffn computes it:
 *   p = softmax(router h) or sigmoid(router h)             (n_expert values)
 *   the expert_used_count experts with the largest p + exp_probs_b, their
 *   weights w = p (unbiased), divided by their sum where the arch says so
 *   out = sum over them, largest first, of w * down_e(silu(gate_e h) * up_e h)
 *   (Qwen3.5-MoE) + sigmoid(gate_inp_shexp h) * the shared expert's FFN of h
 * Every expert's matrices are one 3-D tensor each (ffn_gate_exps, ...),
 * bound as one Weight; expert e's matrix is a view of its rows
 * (model_expert: no copy), computed by the kernels of the dense matrices.
 * Mapped, an expert's pages are read only when a token is routed to it.
 *
 * A step groups its tokens by expert: each (token, expert) pair gets a slot,
 * the slots of one expert consecutive; the tokens' quantized inputs are
 * gathered into slot order, so every chosen expert's rows are read once
 * per step for all its tokens. Stages (layer.h: after the FFN's norm):
 *   route   per token: router logits, probabilities, top-k, weights
 *   gather  the grouping (every thread derives the same), inputs copied
 *   up      per expert, rows of gate and up split between threads,
 *           silu(gate) * up quantized for down
 *   down    per expert, rows of down; each token's slots summed into xb
 * A token's arithmetic depends on its own experts only: the same logits
 * in any step shape and with any threads. */
#ifndef PITH_MOE_H
#define PITH_MOE_H

#include <stdint.h>

#include "model.h"

#define MOE_MAX_EXPERTS 512 /* llama.cpp's LLAMA_MAX_EXPERTS */
#define MOE_MAX_USED 32
#define MOE_MAX_INPUTS 6    /* matrices reading the FFN's input: moe_inputs */

/* The workspace's scratch of a mixture of experts, for steps of `batch`
 * tokens and K = expert_used_count. */
typedef struct {
    float *probs;       /* [batch][n_expert] the router's probabilities */
    int32_t *sel;       /* [batch][K] each token's experts, largest first */
    float *weight;      /* [batch][K] their weights */
    uint32_t *slot;     /* [batch][K] each pair's slot */
    uint32_t *off;      /* [n_expert + 1] each expert's first slot */
    uint8_t *act;       /* [batch K][act] the slots' inputs, in gate's activation format */
    float *out;         /* [batch K][n_embd] the slots' down outputs, then [batch][n_embd] the
                           shared expert's */
    float *shared_gate; /* [batch] sigmoid of the shared expert's gate */
} MoeScratch;

/* Bytes of that scratch (0: the model has no experts), and carving it
 * from base. */
uint64_t moe_scratch_bytes(const ModelConfig *c, uint32_t batch);
void moe_scratch(const ModelConfig *c, uint32_t batch, uint8_t *base, MoeScratch *s);

/* Floats of hb (and hb2) a token needs: its slots' hidden rows, then
 * (for all the step's tokens after all the slots) the shared expert's. */
static inline uint64_t moe_hidden(const ModelConfig *c)
{
    return (uint64_t)c->n_expert_used * c->n_ff_exp + c->n_ff_shexp;
}
/* Bytes of act_mid a token needs (down's inputs, the same way). */
uint64_t moe_mid_bytes(const ModelConfig *c);

/* The matrices reading the FFN's normed input (quantized for them by the
 * stage before): router, gate and up, the shared expert's three. Returns
 * their count (at most MOE_MAX_INPUTS). */
int moe_inputs(const LayerWeights *lw, const Weight **w);

#endif

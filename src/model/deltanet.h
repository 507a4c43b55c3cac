/* deltanet.h - Qwen3.5's (qwen35) own steps: the gated DeltaNet layers
 * and the output gate of its attention layers.
 *
 * A DeltaNet layer, for each token of a step (x: the normed input):
 *   qkv = Wqkv x   (2 * key heads + value heads, each ssm.state_size wide)
 *   z = Wz x, b = Wbeta x, a = Walpha x   (z: value heads wide; b, a: one per value head)
 *   qkv = silu(causal convolution of qkv over the last ssm.conv_kernel tokens), channel by channel
 *   q, k of each key head scaled to unit length (l2, eps: the RMS norm's)
 *   per value head h, with key head h % key heads (llama.cpp's converter
 *   orders the value heads so) and its state S [d_state x d_state]:
 *     S = S * exp(softplus(a + dt_bias) * A)   (A = ssm_a < 0: the decay)
 *     S = S + outer(sigmoid(b) * (v - S k), k)
 *     o = S q / sqrt(d_state)
 *   o = RMSNorm(o) * ssm_norm * silu(z), head by head;  out = Wout o.
 * The state of a sequence is, per DeltaNet layer, the last conv_kernel - 1
 * inputs of the convolution and every value head's S: a fixed size, in F32,
 * whatever the context length (no KV cache). A token at position 0 starts
 * from zeros; a sequence can only go on from where it stopped (a state
 * cannot be rewound or shifted).
 *
 * The layer is a mixer of the layer loop (layer.h: deltanet_plan): its
 * matmuls run batched over a step's tokens, rows split between threads;
 * the convolution by channels; the recurrence goes through the tokens
 * inside, value head by value head in parallel,
 * with S kept as a scalar times a matrix so that a token's decay costs no
 * pass over S (deltanet.c): token by token, or, with the fast kernel sets,
 * a sequence's runs of 8 to 16 tokens at once in the chunked form
 * (kernels.h: kern_delta_chunk), equal but for rounding. */
#ifndef PITH_DELTANET_H
#define PITH_DELTANET_H

#include <stdint.h>

#include "forward.h"
#include "model.h"

/* Floats of one sequence's state for one DeltaNet layer. */
uint64_t deltanet_state_floats(const ModelConfig *c);

/* Floats of the workspace scratch for steps of `batch` tokens (0 if the
 * model has no DeltaNet layer). */
uint64_t deltanet_scratch_floats(const ModelConfig *c, uint32_t batch);

/* The scratch, carved from `base` (deltanet_scratch_floats of it). */
typedef struct {
    float *qkv;    /* [batch][conv channels]: Wqkv x */
    float *z;      /* [batch][d_inner] */
    float *beta;   /* [batch][value heads] */
    float *alpha;  /* [batch][value heads] */
    float *conv;   /* [batch][conv channels]: the convolution's output */
    float *o;      /* [batch][d_inner]: the gated, normed output (Wout's input) */
} DeltaNetScratch;
void deltanet_scratch(const ModelConfig *c, uint32_t batch, float *base, DeltaNetScratch *d);

/* The attention layers: "attn_q" gives each head's q then its gate
 * ([2 * q width] per token, qg). Heads h0..h1-1 of a token: their q into
 * q ([q width]); att (the attention's output) *= sigmoid(gate). */
void deltanet_q_heads(const ModelConfig *c, const float *qg, float *q, uint32_t h0, uint32_t h1);
void deltanet_gate_heads(const ModelConfig *c, float *att, const float *qg, uint32_t h0, uint32_t h1);

#endif

/* forward.h - the forward pass and its KV cache.
 *
 * One code path: a step feeds up to opt.batch tokens at consecutive
 * positions (a prompt in batches, or one token when decoding). Every matmul
 * loops over the weight rows and dots each row with every token of the
 * step, so a batch and the same tokens fed one by one give the same logits. */
#ifndef PITH_FORWARD_H
#define PITH_FORWARD_H

#include <stdint.h>

#include "arena.h"
#include "model.h"

#define FORWARD_MAX_BATCH 512
#define FORWARD_MAX_HEAD_DIM 1024

/* Adds the KV cache, activations, scores and logits buffers to the plan. */
void forward_plan(const ModelConfig *cfg, const ModelOptions *opt, Plan *plan);
/* Carves them (called by model_load). Returns 0, or -1 if the arena is short. */
int forward_init(Model *m, Arena *arena);

/* Feeds tokens[0..n-1] at positions pos0..pos0+n-1 (1 <= n <= opt.batch).
 * pos0 may be at most m->n_past: feeding at an earlier position overwrites
 * the cache from there (e.g. to retry a chat turn). Afterwards
 * m->n_past = pos0 + n. Logits: with all_logits (needs opt.all_logits) row i
 * of m->logits belongs to tokens[i]; otherwise row 0 holds the last token's.
 * Returns 0, or -1 with a one-line reason in m->err (cache full, bad token,
 * too many tokens). */
int forward_batch(Model *m, const int32_t *tokens, int n, uint32_t pos0, int all_logits);

/* Feeds any number of tokens from m->n_past on, in steps of opt.batch;
 * leaves the last token's logits in row 0 of m->logits. */
int forward_prompt(Model *m, const int32_t *tokens, int n);

/* Empties the cache (the next token goes to position 0). */
void model_reset_cache(Model *m);

/* RoPE, shared with the context shift, over n_rot elements of a head
 * (rope.dimension_count: the whole head, for every architecture pith runs).
 * forward_rope_table writes cos, sin of pos * base^(-2i/n_rot) / factor[i]
 * for the n_rot/2 pairs (angles in double; pos may be negative, to rotate
 * back; freq_factors is rope_freqs.weight, or NULL for all 1);
 * forward_rope rotates one head's vector with them, pairing (2i, 2i+1) for
 * ROPE_NORM or (i, i + n_rot/2) for ROPE_NEOX. */
void forward_rope_table(float *cs, uint32_t n_rot, double pos, float base, const float *freq_factors);
void forward_rope(float *v, uint32_t n_rot, const float *cs, RopeStyle style);

/* Index of the largest of n values (lowest index on a tie). */
int forward_argmax(const float *v, int n);

#endif

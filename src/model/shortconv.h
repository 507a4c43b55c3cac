/* shortconv.h - LFM2's short-convolution layers: the step of the forward
 * pass that is their own, and the state a sequence keeps for them.
 *
 * A short-convolution layer replaces attention (a mixer of the layer loop,
 * layer.h: shortconv_plan; as llama.cpp's lfm2 graph):
 *   b, c, x = rows [0, E), [E, 2E), [2E, 3E) of in_proj h   (E = n_embd)
 *   y_t = c_t * sum_k w[k] * (b * x)_{t - (L-1) + k}          (per channel)
 *   out = out_proj y
 * a causal convolution over time of L taps (shortconv.l_cache, 3 in LFM2),
 * channel by channel. The state of a sequence is the last L - 1 values of
 * b * x of each channel: [conv layer][L - 1][n_embd] floats, oldest row
 * first, as the kernels' causal_conv keeps its history (F32 whatever
 * the KV cache type, as llama.cpp keeps it), in SeqState.recurrent. It
 * cannot be rewound: a sequence goes on from n_past, or starts again at 0
 * (which clears it). */
#ifndef PITH_SHORTCONV_H
#define PITH_SHORTCONV_H

#include <stdint.h>

#include "forward.h"

/* Bytes of one layer's state in one sequence (0: the model has no
 * short-convolution layer). */
uint64_t shortconv_state_bytes(const ModelConfig *c);

#endif

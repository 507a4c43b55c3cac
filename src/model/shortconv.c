/* shortconv.c - LFM2's short convolution (see shortconv.h), through the
 * kernels' causal_conv: float32, each sum over the taps in order from the
 * oldest, as ggml's ssm_conv adds them, so a token's result is the same in
 * any step shape and kernel set (every set gives the reference's bits). */
#include "shortconv.h"

#include <string.h>

#include "../kernels/kernels.h"

uint64_t shortconv_state_bytes(const ModelConfig *c)
{
    if (c->conv_l < 2 || model_conv_before(c, c->n_layer) == 0) return 0;
    return (uint64_t)c->n_embd * (c->conv_l - 1) * sizeof(float);
}

void shortconv_apply(const ModelConfig *c, Workspace *ws, const LayerWeights *lw, uint32_t layer, int n, float *out)
{
    const KernelSet *ks = kern_active();
    uint64_t E = c->n_embd;
    uint32_t L = c->conv_l;
    for (int t = 0; t < n; t++) {
        SeqState *seq = ws->tok_seq[t];
        float *hist = (float *)(void *)(seq->recurrent + model_conv_before(c, layer) * seq->recurrent_layer_bytes);
        if (ws->tok_pos[t] == 0) memset(hist, 0, (uint64_t)E * (L - 1) * sizeof *hist);
        float *row = ws->conv + (uint64_t)t * 3 * E, *y = out + (uint64_t)t * E;
        for (uint64_t ch = 0; ch < E; ch++) row[2 * E + ch] *= row[ch]; /* b * x, in x's place */
        ks->causal_conv(y, hist, E, row + 2 * E, lw->conv, L, E);
        for (uint64_t ch = 0; ch < E; ch++) y[ch] *= row[E + ch];
    }
}

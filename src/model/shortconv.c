/* shortconv.c - LFM2's short convolution (see shortconv.h). Float32, each
 * sum over the taps in order from the oldest, as ggml's ssm_conv adds them,
 * so a token's result is the same in any step shape. */
#include "shortconv.h"

#include <string.h>

uint64_t shortconv_state_bytes(const ModelConfig *c)
{
    if (c->conv_l < 2 || model_conv_before(c, c->n_layer) == 0) return 0;
    return (uint64_t)c->n_embd * (c->conv_l - 1) * sizeof(float);
}

/* One sequence's run of m tokens (rows of ws->conv from `row`), one
 * channel: the window is the state's d values, then b * x of the run. */
static void conv_channel(const float *in, uint64_t E, uint32_t L, const float *w, float *state, int m, float *out,
                         uint64_t ch)
{
    uint32_t d = L - 1;
    for (int t = 0; t < m; t++) {
        float sum = 0.0f;
        for (uint32_t k = 0; k < L; k++) {
            uint64_t j = (uint64_t)t + k; /* index in the window */
            float v = j < d ? state[j] : in[(j - d) * 3 * E + 2 * E + ch];
            sum += v * w[k];
        }
        out[(uint64_t)t * E + ch] = in[(uint64_t)t * 3 * E + E + ch] * sum;
    }
    /* the last d values of the window are the next state (read ahead of
     * the writes: index m + i > i) */
    for (uint32_t i = 0; i < d; i++) {
        uint64_t j = (uint64_t)m + i;
        state[i] = j < d ? state[j] : in[(j - d) * 3 * E + 2 * E + ch];
    }
}

void shortconv_apply(const ModelConfig *c, Workspace *ws, const LayerWeights *lw, uint32_t layer, int n, float *out)
{
    uint64_t E = c->n_embd;
    uint32_t L = c->conv_l;
    for (int t0 = 0; t0 < n;) {
        SeqState *seq = ws->tok_seq[t0];
        int t1 = t0 + 1;
        while (t1 < n && ws->tok_seq[t1] == seq) t1++;
        float *state = (float *)(void *)(seq->recurrent + model_conv_before(c, layer) * seq->recurrent_layer_bytes);
        if (ws->tok_pos[t0] == 0) memset(state, 0, (uint64_t)E * (L - 1) * sizeof *state);
        float *in = ws->conv + (uint64_t)t0 * 3 * E;
        for (int t = 0; t < t1 - t0; t++) { /* b * x, in x's place */
            float *row = in + (uint64_t)t * 3 * E;
            for (uint64_t ch = 0; ch < E; ch++) row[2 * E + ch] = row[ch] * row[2 * E + ch];
        }
        for (uint64_t ch = 0; ch < E; ch++)
            conv_channel(in, E, L, lw->conv + ch * L, state + ch * (L - 1), t1 - t0, out + (uint64_t)t0 * E, ch);
        t0 = t1;
    }
}

/* context_shift.c - drop the middle of a full KV cache and re-rotate the
 * keys that move (see context_shift.h). */
#include "context_shift.h"

#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "forward.h"
#include "../base/ggml_type.h"
#include "../kernels/quant.h"

typedef struct {
    const Model *m;
    SeqState *seq;
    uint32_t n_keep, n_drop, n_move;
    const float *cs;   /* cos, sin of (-n_drop) * theta_i, n_rot/2 pairs */
} ShiftJob;

static void shift_worker(void *ctx, int ith, int nth)
{
    const ShiftJob *j = ctx;
    const ModelConfig *c = &j->m->cfg;
    SeqState *seq = j->seq;
    KvType kt = seq->kv_type;
    uint64_t krow = kv_type_bytes(kt, c->head_dim), vrow = kv_type_bytes(kt, c->head_dim_v); /* bytes per row */
    uint32_t l0 = (uint32_t)((uint64_t)c->n_layer * (uint64_t)ith / (uint64_t)nth);
    uint32_t l1 = (uint32_t)((uint64_t)c->n_layer * (uint64_t)(ith + 1) / (uint64_t)nth);
    uint64_t from = (uint64_t)j->n_keep + j->n_drop, to = j->n_keep;
    float head[FORWARD_MAX_HEAD_DIM];

    for (uint32_t l = l0; l < l1; l++) {
        int ropes = model_layer_ropes(c, l); /* keys of a layer without RoPE only move */
        for (uint32_t h = 0; h < c->n_head_kv; h++) {
            /* the kv head's rows, one per position (model.h: kv_row_index) */
            uint8_t *kc, *vc;
            uint32_t rows;
            seq_kv_head(c, seq, l, h, &kc, &vc, &rows);
            memmove(kc + to * krow, kc + from * krow, (uint64_t)j->n_move * krow);
            memmove(vc + to * vrow, vc + from * vrow, (uint64_t)j->n_move * vrow);
            for (uint64_t p = to; ropes && p < to + j->n_move; p++) {
                uint8_t *key = kc + p * krow;
                if (kt == KV_F32) {
                    forward_rope((float *)key, c->n_rot, j->cs, c->arch->rope);
                } else if (kt == KV_F16) {
                    uint16_t *k16 = (uint16_t *)key;
                    for (uint32_t i = 0; i < c->head_dim; i++) head[i] = quant_f16_to_f32(k16[i]);
                    forward_rope(head, c->n_rot, j->cs, c->arch->rope);
                    for (uint32_t i = 0; i < c->head_dim; i++) k16[i] = quant_f32_to_f16(head[i]);
                } else {
                    /* Q8_0: dequantize, rotate, requantize. This adds one
                     * rounding (up to half a code step, max|block| / 254) to
                     * the one the key got when it was stored, so a shifted
                     * key is a little further from exact than a fresh one
                     * (tests/test_context_shift.c measures it). */
                    quant_dequant_row(GGML_TYPE_Q8_0, key, head, c->head_dim);
                    forward_rope(head, c->n_rot, j->cs, c->arch->rope);
                    quant_quantize_row(GGML_TYPE_Q8_0, head, key, c->head_dim);
                }
            }
        }
    }
}

int context_shift(const Model *m, SeqState *seq, uint32_t n_keep, uint32_t n_drop, char *err, size_t cap)
{
    const ModelConfig *c = &m->cfg;
    if (n_drop == 0) return 0;
    if ((uint64_t)n_keep + n_drop > seq->n_past) {
        snprintf(err, cap, "context shift: keeping %u and dropping %u positions needs more than the %u filled",
                 n_keep, n_drop, seq->n_past);
        return -1;
    }
    if (seq->ring || seq->recurrent) {
        snprintf(err, cap, "context shift: the %s cannot shift (recompute the kept tokens)",
                 seq->ring ? "sliding-window layers' rings" : "recurrent layers' states");
        return -1;
    }
    if (c->head_dim > FORWARD_MAX_HEAD_DIM || c->head_dim % 2 != 0) {
        snprintf(err, cap, "context shift: head dimension %u is not supported", c->head_dim);
        return -1;
    }
    /* One rotation by -n_drop positions (at the frequencies of the model's
     * scaling, linear or YaRN) serves every moved key. */
    float cs[FORWARD_MAX_HEAD_DIM];
    double freq[FORWARD_MAX_HEAD_DIM / 2];
    forward_rope_freqs(c, 0, freq);
    forward_rope_angles(cs, c->n_rot, -(double)n_drop, freq, m->rope_freqs);
    ShiftJob j = {m, seq, n_keep, n_drop, seq->n_past - n_keep - n_drop, cs};
    port_parallel(shift_worker, &j);
    seq->n_past -= n_drop;
    return 0;
}

uint32_t context_shift_amount(uint32_t n_past, uint32_t n_keep)
{
    if (n_keep >= n_past) return 0;
    uint32_t rest = n_past - n_keep;
    return rest / 2 > 0 ? rest / 2 : 1;
}

/* weight_stream.c - the core's side of --load stream: what to read, where
 * it goes, and when (weight_stream.h). The reading itself, with its thread
 * and file calls, is port/stream.c. */
#include "weight_stream.h"

#include <stdio.h>
#include <string.h>

#include "../../port/port.h"

static PortFile *file_of(const Model *m, const Weight *w)
{
    return &m->gguf->files[w->file_index];
}

/* Queues unit u into slot s. A streamed layer's copy in the slot points at
 * the slot from now on; nobody reads it before wstream_layer waits. */
static void fetch(WeightStream *S, const Model *m, uint32_t u, int s)
{
    PortStreamPiece pieces[LT_COUNT];
    int n = 0;
    uint32_t streamed_layers = m->cfg.n_layer - S->resident_layers;
    if (u < streamed_layers) {
        LayerWeights *lw = &S->slot_layer[s];
        *lw = m->layers[S->resident_layers + u];
        uint64_t off = 0;
        for (int i = 0; i < LT_COUNT; i++) {
            if (!layer_tensors[i].matrix || !model_layer_has(&m->cfg, S->resident_layers + u, (int)i)) continue;
            Weight *w = (Weight *)(void *)((char *)lw + layer_tensors[i].offset);
            if (w->rows == 0) continue; /* not in a layer of this kind (Qwen3.5) */
            uint64_t len = w->rows * w->row_bytes;
            w->data = S->slot[s] + off;
            pieces[n++] = (PortStreamPiece){file_of(m, w), w->file_offset, len, S->slot[s] + off};
            off += arena_round(len);
        }
        model_layer_views(&m->cfg, lw); /* fused matrices: the views follow them into the slot */
    } else {
        const Weight *w = &m->output;
        uint64_t r0 = (uint64_t)(u - streamed_layers) * S->out_chunk_rows;
        uint64_t r1 = r0 + S->out_chunk_rows < w->rows ? r0 + S->out_chunk_rows : w->rows;
        pieces[n++] = (PortStreamPiece){file_of(m, w), w->file_offset + r0 * w->row_bytes, (r1 - r0) * w->row_bytes,
                                        S->slot[s]};
    }
    port_stream_fetch(s, pieces, n);
    S->holds[s] = u;
    S->pending = s;
}

static void settle(WeightStream *S)
{
    if (S->pending >= 0) port_stream_wait(S->pending);
    S->pending = -1;
}

/* Unit u in memory, and the next one on its way into the other slot;
 * returns u's slot. */
static int unit(WeightStream *S, const Model *m, uint32_t u)
{
    int s = S->holds[0] == (int64_t)u ? 0 : S->holds[1] == (int64_t)u ? 1 : -1;
    if (s < 0) { /* out of the cycle (first use): fetch it now */
        settle(S);
        s = S->last ^ 1;
        fetch(S, m, u, s);
    }
    if (S->pending == s) settle(S);
    S->last = s;
    uint32_t next = (u + 1) % S->n_units;
    int o = s ^ 1;
    if (next != u && S->holds[o] != (int64_t)next) {
        settle(S);
        fetch(S, m, next, o);
    }
    return s;
}

int wstream_init(WeightStream *S, const Model *m, const ModelOptions *opt, Arena *arena, GgufError *err)
{
    ModelStreamParts p;
    memset(S, 0, sizeof *S);
    model_stream_bytes(&m->cfg, opt, &p);
    S->slot_bytes = p.slot_bytes;
    S->slot[0] = arena_take(arena, p.slot_bytes);
    S->slot[1] = arena_take(arena, p.slot_bytes);
    S->embd_rows = arena_take(arena, p.embd_bytes);
    if (!S->slot[0] || !S->slot[1] || !S->embd_rows) {
        snprintf(err->msg, sizeof err->msg, "internal error: memory plan too small for the stream window");
        return -1;
    }
    S->resident_layers = m->resident_layers;
    S->out_chunk_rows = p.out_chunk_rows;
    S->n_out_chunks = p.n_out_chunks;
    S->n_units = (m->cfg.n_layer - S->resident_layers) + p.n_out_chunks;
    S->holds[0] = S->holds[1] = -1;
    S->pending = -1;
    S->last = 1;
    char why[256];
    if (port_stream_start(opt->stream_keep_cache, why, sizeof why) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s", why);
        return -1;
    }
    S->running = 1;
    return 0;
}

const LayerWeights *wstream_layer(WeightStream *S, const Model *m, uint32_t l)
{
    if (l < S->resident_layers) return &m->layers[l];
    return &S->slot_layer[unit(S, m, l - S->resident_layers)];
}

uint64_t wstream_output_chunk(WeightStream *S, const Model *m, uint32_t c, Weight *part)
{
    uint8_t *slot = S->slot[unit(S, m, (m->cfg.n_layer - S->resident_layers) + c)];
    uint64_t r0 = (uint64_t)c * S->out_chunk_rows;
    uint64_t r1 = r0 + S->out_chunk_rows < m->output.rows ? r0 + S->out_chunk_rows : m->output.rows;
    *part = m->output;
    part->data = slot;
    part->rows = r1 - r0;
    return r0;
}

const uint8_t *wstream_embd_row(WeightStream *S, const Model *m, int32_t id, int t, char *err, size_t cap)
{
    const Weight *e = &m->tok_embd;
    if (e->data) return e->data + (uint64_t)id * e->row_bytes;
    uint8_t *dst = S->embd_rows + (uint64_t)t * e->row_bytes;
    PortFile *f = file_of(m, e);
    uint64_t off = e->file_offset + (uint64_t)id * e->row_bytes;
    if (port_file_read(f, off, dst, (size_t)e->row_bytes) != 0) {
        snprintf(err, cap, "%s: byte %llu: cannot read row %d of token_embd.weight: the file changed or was truncated while in use",
                 f->path, (unsigned long long)off, id);
        return NULL;
    }
    return dst;
}

void wstream_stop(WeightStream *S)
{
    if (!S->running) return;
    port_stream_stop();
    S->running = 0;
    S->holds[0] = S->holds[1] = -1;
    S->pending = -1;
}

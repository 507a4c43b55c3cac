/* weight_stream.h - --load stream: the weight matrices reach the forward
 * pass through two slots of the arena, each filled by the port's reader
 * thread (port.h, port_stream_*) one unit ahead of the compute.
 *
 * A forward step uses the units in a fixed cycle:
 *   the streamed layers (resident_layers .. n_layer-1), one unit each,
 *   then the output matrix in chunks of out_chunk_rows rows,
 *   then (next step) the first streamed layer again.
 * Asking for unit u waits for u's slot, then queues unit u+1 (cyclically)
 * into the other slot, whose unit u-1 is finished: the read of u+1
 * overlaps the compute of u. So the first output chunk is read while the
 * last layer computes, and the next step's first layer while the last
 * output chunk does. A cycle of one or two units stays in its slots.
 *
 * The token embedding is never held whole: a step reads the rows of its
 * own tokens (one row per token) into a buffer of opt.batch rows.
 * A read that fails fails the step: "FILE: byte N: what" (the reader
 * thread's own failures end the program in port/stream.c). */
#ifndef PITH_WEIGHT_STREAM_H
#define PITH_WEIGHT_STREAM_H

#include <stdint.h>

#include "../arena/arena.h"
#include "model.h"

/* The stream window of one Workspace: the slots, and which unit each holds. */
typedef struct {
    uint8_t *slot[2];         /* two slots of slot_bytes: one computes while the other fills */
    uint64_t slot_bytes;
    LayerWeights slot_layer[2]; /* the streamed layer each slot holds, its matrices pointing there */
    uint8_t *embd_rows;       /* batch rows of token_embd, read per step */
    uint32_t resident_layers; /* layers 0..resident_layers-1 stay in the arena (Model) */
    uint32_t out_chunk_rows, n_out_chunks;
    uint32_t n_units;         /* streamed layers + output chunks: one cycle per step */
    int64_t holds[2];         /* unit each slot holds or is receiving, -1: none */
    int pending;              /* slot with a fetch in flight, -1: none */
    int last;                 /* slot used last */
    int running;              /* the reader thread runs (wstream_stop stops it) */
} WeightStream;

/* Carves the slots and the embedding rows (model_plan planned them) and
 * starts the reader thread. Returns 0, or -1 with a reason in err. */
int wstream_init(WeightStream *S, const Model *m, const ModelOptions *opt, Arena *arena, GgufError *err);
/* Stops the reader thread (before the arena is unmapped); harmless when
 * nothing runs. */
void wstream_stop(WeightStream *S);

/* Layer l's weights: the model's own when resident, else the slot's copy
 * whose matrices point into the slot until the next wstream_* call after
 * this layer's compute. */
const LayerWeights *wstream_layer(WeightStream *S, const Model *m, uint32_t l);

/* Chunk c (0 .. n_out_chunks-1) of the output matrix: fills `part` (the
 * output Weight restricted to the chunk's rows, data in a slot) and
 * returns its first row. */
uint64_t wstream_output_chunk(WeightStream *S, const Model *m, uint32_t c, Weight *part);

/* Row `id` of token_embd.weight: in place when the matrix is in memory,
 * else read into row t of the step's buffer (t < batch). NULL, with a
 * reason in err (cap bytes), when the read fails. */
const uint8_t *wstream_embd_row(WeightStream *S, const Model *m, int32_t id, int t, char *err, size_t cap);

#endif

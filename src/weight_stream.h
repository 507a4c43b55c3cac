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
 * Reads that fail end the program: "pith: FILE: byte N: what", status 2. */
#ifndef PITH_WEIGHT_STREAM_H
#define PITH_WEIGHT_STREAM_H

#include <stdint.h>

#include "arena.h"
#include "model.h"

/* Carves the slots and the embedding rows (model_plan planned them) and
 * starts the reader thread. Returns 0, or -1 with a reason in err. */
int wstream_init(Model *m, Arena *arena, GgufError *err);

/* Makes layer l's matrices available (a no-op for a resident layer): its
 * Weights point into a slot until the next wstream_* call after this
 * layer's compute. */
void wstream_layer(Model *m, uint32_t l);

/* Chunk c (0 .. n_out_chunks-1) of the output matrix: fills `part` (the
 * output Weight restricted to the chunk's rows, data in a slot) and
 * returns its first row. */
uint64_t wstream_output_chunk(Model *m, uint32_t c, Weight *part);

/* Row `id` of token_embd.weight: in place when the matrix is in memory,
 * else read into row t of the step's buffer (t < opt.batch). */
const uint8_t *wstream_embd_row(Model *m, int32_t id, int t);

#endif

/* context_shift.h - making room in a full KV cache.
 *
 * When the cache is full, a conversation can go on by forgetting part of
 * its past: the first n_keep positions stay (e.g. a system prompt), the
 * next n_drop are dropped, and every later position moves down by n_drop.
 * Keys carry RoPE rotations of their position, and a rotation by a then b
 * is a rotation by a + b, so a moved key is rotated by -n_drop: it then
 * holds the rotation of its new position, as if it had been computed
 * there (values carry no position and only move). */
#ifndef PITH_CONTEXT_SHIFT_H
#define PITH_CONTEXT_SHIFT_H

#include <stdint.h>

#include <stddef.h>

#include "forward.h"

/* Drops cache positions [n_keep, n_keep + n_drop) of every layer of
 * sequence seq and moves [n_keep + n_drop, n_past) down to n_keep,
 * re-rotating their keys; then seq->n_past -= n_drop. Works for F32, F16
 * and Q8_0 caches. Returns 0, or -1 with a one-line reason in err (cap
 * bytes): a range outside the filled positions. */
int context_shift(const Model *m, SeqState *seq, uint32_t n_keep, uint32_t n_drop, char *err, size_t cap);

/* How many positions a shift drops when the cache holds n_past positions
 * and the first n_keep are kept: half of the rest (at least one), or 0 if
 * nothing can be dropped. */
uint32_t context_shift_amount(uint32_t n_past, uint32_t n_keep);

#endif

/* kernels_ref.h - what the reference files share (private to
 * src/kernels/ref/): field offsets of the block layouts
 * (src/base/ggml_type.h) as int constants, so that an index such as
 * row[Q8_CODES + j] stays int arithmetic, as the loops were written and
 * compiled (offsetof is a size_t). */
#ifndef PITH_KERNELS_REF_H
#define PITH_KERNELS_REF_H

#include <stddef.h>

#include "../../base/ggml_type.h"

enum {
    Q8_CODES = offsetof(BlockQ8_0, qs),
    Q4_CODES = offsetof(BlockQ4_0, qs),
    Q6_QL = offsetof(BlockQ6_K, ql),
    Q6_QH = offsetof(BlockQ6_K, qh),
    Q6_SCALES = offsetof(BlockQ6_K, scales)
};

#endif

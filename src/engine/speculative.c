/* speculative.c - where drafts come from for speculative decoding (the
 * verification, the acceptance rule and the undo are in slot.c's step).
 * Prompt lookup ("ngram-simple"): text that repeats what came before
 * (edits, summaries, code, JSON) is guessed from its earlier occurrence,
 * at the cost of one scan of the ids when nothing matches. */
#include "engine.h"

uint32_t spec_ngram_draft(const int32_t *ids, uint32_t n, int32_t *out, uint32_t max)
{
    if (n <= SPEC_NGRAM || max == 0) return 0;
    const int32_t *key = ids + n - SPEC_NGRAM;
    for (uint32_t j = n - SPEC_NGRAM; j-- > 0;) {
        uint32_t m = 0;
        while (m < SPEC_NGRAM && ids[j + m] == key[m]) m++;
        if (m < SPEC_NGRAM) continue;
        /* what followed it; past the end, the drafts repeat themselves
         * (a period shorter than the draft) */
        for (uint32_t i = 0; i < max; i++) {
            uint32_t src = j + SPEC_NGRAM + i;
            out[i] = src < n ? ids[src] : out[src - n];
        }
        return max;
    }
    return 0;
}

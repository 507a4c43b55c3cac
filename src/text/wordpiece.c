/* wordpiece.c - WordPiece as llama.cpp's llm_tokenizer_wpm_session runs it
 * (BERT, bge, nomic-embed-text, all-MiniLM; see tokenizer.h): the BERT
 * normalizer splits the text into words, and each word, with U+2581 in
 * front, is matched greedily, longest token first. */
#include "wordpiece.h"

#include <string.h>

#include "unicode.h"

#define PHANTOM_SPACE "\xE2\x96\x81" /* U+2581, in front of every word */

/* CJK ideographs, each a word of its own: llama.cpp's ranges (BERT's, with
 * 0x2B920 where Unicode's Extension E starts at 0x2B820, as there). */
static const uint32_t chinese_ranges[][2] = {
    {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xF900, 0xFAFF},   {0x20000, 0x2A6DF},
    {0x2A700, 0x2B73F}, {0x2B740, 0x2B81F}, {0x2B920, 0x2CEAF}, {0x2F800, 0x2FA1F},
};

static size_t utf8_put(uint8_t *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | cp >> 6);
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | cp >> 12);
        o[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | cp >> 18);
    o[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

static int push(int32_t id, int32_t *ids, int cap, int *n_out)
{
    if (*n_out >= cap) return -1;
    ids[(*n_out)++] = id;
    return 0;
}

/* w[0..n): U+2581 and a word. Longest token at each position; if some
 * position has none, the word is the unknown token alone (nothing if the
 * vocabulary has none: llama.cpp would give the id -1). */
static int match_word(const Tokenizer *t, WordpiecePrefix longest, const uint8_t *w, size_t n, int32_t *ids, int cap,
                      int *n_out)
{
    int start = *n_out;
    for (size_t i = 0; i < n;) {
        size_t len;
        int32_t id = longest(t, w + i, n - i, &len);
        if (id < 0) {
            *n_out = start;
            break;
        }
        if (push(id, ids, cap, n_out) != 0) return -1;
        i += len;
    }
    return *n_out == start && t->unk >= 0 ? push(t->unk, ids, cap, n_out) : 0;
}

/* The word is built in t->word after U+2581. Each character there takes at
 * most 1.5 times its bytes in the text (gen_unicode_fold.py checks the
 * mappings), so one word fits the 3 bytes per text byte of t->word. */
int wordpiece_fragment(Tokenizer *t, const uint8_t *s, size_t a, size_t b, WordpiecePrefix longest, int32_t *ids,
                       int cap, int *n_out)
{
    uint8_t *w = t->word;
    size_t wn = 3;
    int after_alone = 0;
    memcpy(w, PHANTOM_SPACE, 3);
    for (size_t q = a; q <= b;) {
        uint32_t cp = ' '; /* past the end: a space ends the last word */
        if (q < b) {
            int l = utf8_next(s + q, b - q, &cp); /* an invalid byte is U+FFFD, dropped below */
            q += l > 0 ? (size_t)l : 1;
        } else {
            q++;
        }
        if (t->strip_accents) cp = unicode_nfd_base(cp);
        int cls = unicode_class(cp), space = cls == UCLASS_SPACE, alone = 0;
        if (!space) {
            if (cp == 0 || cp == UNICODE_REPLACEMENT || unicode_is_control(cp) ||
                (t->strip_accents && unicode_is_mark(cp)))
                continue;
            /* punctuation, ASCII symbols and CJK ideographs are words of their own */
            alone = cp < 0x80 ? cls == UCLASS_OTHER
                              : unicode_is_punct(cp) || unicode_in_ranges(chinese_ranges, 8, cp);
        }
        /* the word ends at a space, and before and after a word of its own */
        if (space || alone || after_alone) {
            if (wn > 3 && match_word(t, longest, w, wn, ids, cap, n_out) != 0) return -1;
            wn = 3;
        }
        after_alone = alone;
        if (!space) wn += utf8_put(w + wn, t->lowercase ? unicode_tolower(cp) : cp);
    }
    return 0;
}

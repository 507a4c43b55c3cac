/* unicode.h - the little Unicode the tokenizer needs: lenient UTF-8 decoding
 * and the character classes of the pre-tokenizer regexes (\p{L}, \p{N},
 * \p{M}, \p{P}, \p{S}, \s).
 *
 * The class table is generated from the Unicode Character Database by
 * tests/tools/gen_unicode_tables.py into src/text/unicode_tables.c, the
 * BERT normalizer's data (lowercase, NFD base, control) by
 * tests/tools/gen_unicode_fold.py into src/text/unicode_fold.c. */
#ifndef PITH_UNICODE_H
#define PITH_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* Classes of code points: what the pre-tokenizer regexes tell apart. */
enum {
    UCLASS_OTHER = 0,  /* control, format, unassigned, ... */
    UCLASS_LETTER = 1, /* \p{L} */
    UCLASS_NUMBER = 2, /* \p{N} */
    UCLASS_SPACE = 3,  /* \s: the White_Space property (wins over the rest) */
    UCLASS_MARK = 4,   /* \p{M} */
    UCLASS_PUNCT = 5,  /* \p{P} */
    UCLASS_SYMBOL = 6, /* \p{S} */
};

#define UNICODE_REPLACEMENT 0xFFFDu

/* Runs of one class: (first code point << 3) | class, sorted (unicode_tables.c). */
extern const uint32_t unicode_class_runs[];
extern const int unicode_class_runs_count;

static inline int unicode_in_ranges(const uint32_t (*r)[2], int n, uint32_t cp)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < r[mid][0]) hi = mid - 1;
        else if (cp > r[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

/* The class (UCLASS_*) of a code point, marks, punctuation and symbols told
 * apart. ASCII is answered without the table: llama.cpp's \s there is C's
 * isspace (0x1C..0x1F are not whitespace). */
static inline int unicode_category(uint32_t cp)
{
    if (cp < 128) {
        if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return UCLASS_LETTER;
        if (cp >= '0' && cp <= '9') return UCLASS_NUMBER;
        if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)) return UCLASS_SPACE;
        if (cp < 0x20 || cp == 0x7F) return UCLASS_OTHER;
        /* $ + < = > ^ ` | ~ are symbols, the rest of the printable ASCII punctuation */
        return cp == '$' || cp == '+' || cp == '<' || cp == '=' || cp == '>' || cp == '^' || cp == '`' || cp == '|' ||
                       cp == '~'
                   ? UCLASS_SYMBOL
                   : UCLASS_PUNCT;
    }
    uint32_t key = (cp << 3) | 7;
    int lo = 0, hi = unicode_class_runs_count - 1; /* the last run starting at or before cp */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (unicode_class_runs[mid] <= key) lo = mid;
        else hi = mid - 1;
    }
    return (int)(unicode_class_runs[lo] & 7);
}

/* The class with marks, punctuation and symbols as UCLASS_OTHER: what the
 * hand-written splitters of the common pre-tokenizers need. */
static inline int unicode_class(uint32_t cp)
{
    int c = unicode_category(cp);
    return c > UCLASS_SPACE ? UCLASS_OTHER : c;
}

/* Whether a code point is a mark (\p{M}: Mn, Mc, Me). */
static inline int unicode_is_mark(uint32_t cp) { return cp >= 0x300 && unicode_category(cp) == UCLASS_MARK; }

/* Decodes one character at s (n >= 1 bytes available), the way llama.cpp
 * does: a lead byte with the right number of continuation bytes is a code
 * point (overlong forms and surrogates are accepted, as there). Anything
 * else - a stray continuation byte, a truncated sequence, 0xF8..0xFF, or a
 * 4-byte form above U+10FFFF - is one invalid byte: returns -1 with
 * *cp = U+FFFD, and the caller moves on by one byte. Returns the length
 * (1..4) otherwise. */
static inline int utf8_next(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t b = s[0];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    int len = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || (size_t)len > n) goto invalid;
    uint32_t c = b & (0x7F >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) goto invalid;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c > 0x10FFFF) goto invalid;
    *cp = c;
    return len;
invalid:
    *cp = UNICODE_REPLACEMENT;
    return -1;
}

/* Strict check used for output: the length of the valid UTF-8 character
 * at s (no overlongs, no surrogates, <= U+10FFFF), 0 if s[0..n) is a valid
 * but incomplete prefix, -1 if invalid. */
static inline int utf8_strict_len(const uint8_t *s, size_t n)
{
    uint8_t b = s[0];
    if (b < 0x80) return 1;
    int len;
    uint8_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) len = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
        len = 3;
        if (b == 0xE0) lo = 0xA0;
        if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4;
        if (b == 0xF0) lo = 0x90;
        if (b == 0xF4) hi = 0x8F;
    } else return -1;
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n) return 0;
        uint8_t l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
        if (s[i] < l || s[i] > h) return -1;
    }
    return len;
}

/* ---- the BERT normalizer's data (WordPiece), from unicode_fold.c --------
 * generated by tests/tools/gen_unicode_fold.py (layouts described there) */
extern const uint32_t unicode_lower_runs[];
extern const int unicode_lower_runs_count;
extern const int32_t unicode_lower_deltas[];
extern const uint32_t unicode_nfd_chunks[]; /* two words per chunk */
extern const int unicode_nfd_chunks_count;
extern const uint8_t unicode_nfd_bytes[];
extern const uint32_t unicode_nfd_cjk_blocks[2][2];
extern const uint16_t unicode_nfd_cjk[];
extern const uint8_t unicode_nfd_cjk_astral[];
extern const uint32_t unicode_control_ranges[][2];
extern const int unicode_control_ranges_count;

/* Index of the last of n entries (every step-th word of w; key: the word
 * >> shift, ascending) whose key is <= cp, or -1. */
static inline int unicode_last_key_at(const uint32_t *w, int step, int shift, int n, uint32_t cp)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (w[mid * step] >> shift <= cp) lo = mid + 1;
        else hi = mid - 1;
    }
    return hi;
}

/* Simple lowercase mapping (UnicodeData.txt), as llama.cpp's unicode_tolower. */
static inline uint32_t unicode_tolower(uint32_t cp)
{
    if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
    int i = unicode_last_key_at(unicode_lower_runs, 1, 15, unicode_lower_runs_count, cp);
    if (i < 0) return cp;
    uint32_t r = unicode_lower_runs[i], k = cp - (r >> 15), stride = (r >> 7 & 1) + 1;
    if (k % stride || k / stride > (r >> 8 & 127)) return cp;
    return (uint32_t)((int32_t)cp + unicode_lower_deltas[r & 127]);
}

/* The first code point of cp's canonical decomposition (NFD), as llama.cpp's
 * unicode_cpts_normalize_nfd maps each code point to ONE code point: U+00E9
 * -> U+0065, U+212B -> U+0041, a Hangul syllable -> its leading consonant. */
static inline uint32_t unicode_nfd_base(uint32_t cp)
{
    if (cp < 0xC0) return cp;
    if (cp >= 0xAC00 && cp <= 0xD7A3) return 0x1100 + (cp - 0xAC00) / 588;
    uint32_t at = 0;
    for (int b = 0; b < 2; b++) {
        uint32_t k = cp - unicode_nfd_cjk_blocks[b][0];
        if (k < unicode_nfd_cjk_blocks[b][1]) {
            uint32_t v = unicode_nfd_cjk[at + k];
            if (unicode_nfd_cjk_astral[(at + k) >> 3] >> ((at + k) & 7) & 1) return 0x20000 + v;
            return v ? v : cp;
        }
        at += unicode_nfd_cjk_blocks[b][1];
    }
    int i = unicode_last_key_at(unicode_nfd_chunks, 2, 8, unicode_nfd_chunks_count, cp);
    if (i < 0) return cp;
    const uint32_t *c = unicode_nfd_chunks + 2 * i;
    uint32_t k = cp - (c[0] >> 8);
    if (k > (c[0] & 255)) return cp;
    uint32_t v = unicode_nfd_bytes[(c[1] & 0x3FFF) + k];
    return v ? (c[1] >> 14) + v : cp;
}

/* llama.cpp's \p{C}: general categories Cc, Cf, Co, Cs (not Cn). */
static inline int unicode_is_control(uint32_t cp)
{
    return unicode_in_ranges(unicode_control_ranges, unicode_control_ranges_count, cp);
}

/* \p{P}: general categories Pc Pd Pe Pf Pi Po Ps. */
static inline int unicode_is_punct(uint32_t cp) { return unicode_category(cp) == UCLASS_PUNCT; }

#endif

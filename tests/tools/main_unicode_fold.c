/* unicode_fold - what pith's Unicode tables say about every code point the
 * BERT normalizer (WordPiece) treats specially, for tests/t_unicode_fold.sh
 * to hold against llama.cpp's own tables (its src/unicode-data.cpp):
 *
 *   unicode_fold
 *
 * One line per code point with a lowercase mapping, an NFD base or a class,
 * "CP LOWER NFD FLAGS" (hex, hex, hex, decimal): flags 1 control (Cc Cf Co
 * Cs), 2 punctuation (P*), 4 mark (M*), 8 white space. */
#include <stdio.h>

#include "../../src/text/unicode.h"

int main(void)
{
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        uint32_t lower = unicode_tolower(cp), nfd = unicode_nfd_base(cp);
        int flags = unicode_is_control(cp) | unicode_is_punct(cp) << 1 | unicode_is_mark(cp) << 2 |
                    (unicode_class(cp) == UCLASS_SPACE) << 3;
        if (lower != cp || nfd != cp || flags) printf("%X %X %X %d\n", cp, lower, nfd, flags);
    }
    return 0;
}

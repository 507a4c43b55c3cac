/* check.h - the tests' tiny harness. Each check prints one line:
 *   "ok - NAME"  or  "not ok - NAME: why"
 * tests/run.sh counts them across all test programs and scripts. A test
 * program exits non-zero if any check failed. */
#ifndef PITH_CHECK_H
#define PITH_CHECK_H

#include <stdio.h>

static int check_failures;

#define FIXTURES_DIR (getenv("PITH_FIXTURES") ? getenv("PITH_FIXTURES") : "../shared/fixtures")

/* CHECK(cond, name-format, ...): one counted check. */
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (cond) {                                                          \
            printf("ok - ");                                                 \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
        } else {                                                             \
            check_failures++;                                                \
            printf("not ok - ");                                             \
            printf(__VA_ARGS__);                                             \
            printf(" (%s:%d: %s)\n", __FILE__, __LINE__, #cond);             \
        }                                                                    \
        fflush(stdout);                                                      \
    } while (0)

#define CHECK_DONE() return check_failures ? 1 : 0

#endif

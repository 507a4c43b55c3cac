/* test_rng.h - the tests' small random number generator (xorshift64, the
 * upper bits): reproducible data from a seed, no libc state. */
#ifndef PITH_TEST_RNG_H
#define PITH_TEST_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s;  /* the seed, then the state; never 0 */
} TestRng;

uint32_t test_rng_u32(TestRng *r);
/* Uniform in [-1, 1), 24 bits. */
float test_rng_f(TestRng *r);

#endif

/* test_rng.c - see test_rng.h. */
#include "test_rng.h"

uint32_t test_rng_u32(TestRng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (uint32_t)(r->s >> 16);
}

float test_rng_f(TestRng *r)
{
    return (float)((double)(test_rng_u32(r) & 0xffffff) / 8388608.0 - 1.0);
}

/* test_fmath.c - RoPE's log, sin and cos (src/model/fmath.c) against
 * the C library's, and forward_rope_table against the table libm's pow, sin
 * and cos make (what pith computed before). */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "../src/model/forward.h"
#include "../src/base/fmath.h"
#include "check.h"
#include "tools/test_rng.h"

static TestRng rng = {0x2545f4914f6cdd1dull};

static void test_log(void)
{
    /* rope.freq_base's whole range, 1e-3 to 1e12, and the usual bases */
    double worst = 0.0;
    for (int i = 0; i <= 20000; i++) {
        double x = pow(10.0, -3.0 + 15.0 * i / 20000.0);
        double want = log(x);
        double err = fabs(fmath_log(x) - want) / fmax(fabs(want), 1e-300);
        if (want != 0.0 && err > worst) worst = err;
    }
    static const double bases[] = {10000.0, 1000000.0, 500000.0, 100000.0, 1.0, 2.0, 0.5};
    int exact = 1;
    for (int i = 0; i < 7; i++) exact &= fmath_log(bases[i]) == log(bases[i]);
    CHECK(worst <= 2 * DBL_EPSILON, "fmath_log within 2 ulp of log over 1e-3..1e12 (worst %.3g relative)", worst);
    CHECK(exact, "fmath_log of 1e4, 1e6, 5e5, 1e5, 1, 2, 1/2 equals log's");
}

/* sin and cos of x: worst absolute error against the C library */
static double sincos_err(double x, double worst)
{
    double s, c;
    fmath_sincos(x, &s, &c);
    return fmax(worst, fmax(fabs(s - sin(x)), fabs(c - cos(x))));
}

static void test_sincos(void)
{
    double worst = 0.0;
    for (int i = 0; i < 200000; i++) { /* |x| < 1e6: positions times frequencies */
        double x = ldexp(test_rng_f(&rng), (int)(test_rng_u32(&rng) % 21));
        worst = sincos_err(x, worst);
    }
    const double pi = 3.14159265358979323846;
    for (int k = -4000; k <= 4000; k++) /* at and next to the octant boundaries, where the quadrant changes */
        for (int d = -2; d <= 2; d++) worst = sincos_err(k * (pi / 4) + d * 1e-9, worst);
    for (int i = 0; i < 20000; i++) worst = sincos_err(ldexp(test_rng_f(&rng), 26), worst); /* up to 6.7e7 */
    CHECK(worst <= 2 * DBL_EPSILON, "fmath_sincos within 2 ulp of 1 of sin and cos for |x| < 6.7e7 (worst %.3g)", worst);
    double s, c;
    fmath_sincos(0.0, &s, &c);
    CHECK(s == 0.0 && c == 1.0, "fmath_sincos(0) is (0, 1) exactly");
}

/* The table against the one libm's pow, sin and cos make: both are
 * accurate to about 1e-16 before the rounding to float, so they may
 * differ only where a value lies that close to a float rounding boundary,
 * by one float ulp (at most 2^-24 absolute: every value is below 1). */
static void test_table(void)
{
    static const float bases[] = {10000.0f, 1000000.0f, 500000.0f};
    float factors[64], cs[256];
    for (int i = 0; i < 64; i++) factors[i] = 1.0f + 0.75f * (float)i; /* as rope_freqs.weight would scale */
    uint64_t n = 0, differ = 0;
    double worst = 0.0;
    for (int b = 0; b < 3; b++)
        for (int p = -64; p < 70000; p += (p < 4096 ? 1 : 97)) {
            uint32_t n_rot = b == 1 ? 64 : 128;
            const float *ff = b == 2 ? factors : NULL;
            forward_rope_table(cs, n_rot, (double)p, bases[b], ff);
            for (uint32_t i = 0; i < n_rot / 2; i++) {
                double theta = (double)p * pow((double)bases[b], -2.0 * (double)i / (double)n_rot);
                if (ff) theta /= (double)ff[i];
                float want_c = (float)cos(theta), want_s = (float)sin(theta);
                double e = fmax(fabs((double)cs[2 * i] - want_c), fabs((double)cs[2 * i + 1] - want_s));
                worst = fmax(worst, e);
                differ += cs[2 * i] != want_c;
                differ += cs[2 * i + 1] != want_s;
                n += 2;
            }
        }
    CHECK(worst <= ldexp(1.0, -24), "forward_rope_table within 2^-24 of libm's table (worst %.3g)", worst);
    CHECK(differ * 10000 <= n, "forward_rope_table equals libm's table but for %llu of %llu values",
          (unsigned long long)differ, (unsigned long long)n);
}

int main(void)
{
    test_log();
    test_sincos();
    test_table();
    CHECK_DONE();
}

/* fmath.c - log, sin and cos for RoPE's angles (see fmath.h). */
#include "fmath.h"

#include <stdint.h>
#include <string.h>

double fmath_log(double x)
{
    /* x = m * 2^e with m in [sqrt(1/2), sqrt(2)) */
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    u = (u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    double m;
    memcpy(&m, &u, sizeof m);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e++;
    }
    /* ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m-1)/(m+1),
     * |s| < 0.172: twelve terms leave less than 1e-19 */
    double s = (m - 1.0) / (m + 1.0), z = s * s, sum = 1.0 / 23;
    for (int k = 21; k >= 1; k -= 2) sum = 1.0 / k + z * sum;
    /* ln 2 in two parts: e * hi is exact (hi has 42 significant bits) */
    const double ln2_hi = 0x1.62e42fefa3800p-1, ln2_lo = 0x1.ef35793c76730p-45;
    return (double)e * ln2_hi + ((double)e * ln2_lo + 2.0 * s * sum);
}

void fmath_sincos(double x, double *s, double *c)
{
    /* x = k pi/2 + r, |r| <= pi/4 (about: k rounds x * 2/pi). pi/2 is in
     * three parts (Cody and Waite): the first two have 27 significant bits,
     * so k times them is exact while |k| < 2^26; the subtractions then lose
     * nothing and r is accurate to about 1e-16. */
    const double two_over_pi = 0x1.45f306dc9c883p-1;
    const double pio2_1 = 0x1.921fb54000000p+0, pio2_2 = 0x1.10b4610000000p-30, pio2_3 = 0x1.a62633145c06ep-58;
    double q = x * two_over_pi;
    int64_t k = (int64_t)(q >= 0 ? q + 0.5 : q - 0.5);
    double kd = (double)k;
    double r = ((x - kd * pio2_1) - kd * pio2_2) - kd * pio2_3;
    /* Taylor series in z = r^2, highest term first; on |r| <= pi/4 the
     * first terms left out (r^19/19!, r^20/20!) are below 1e-19 */
    static const double sin_coef[] = {1.0 / 355687428096000.0, -1.0 / 1307674368000.0, 1.0 / 6227020800.0,
                                      -1.0 / 39916800.0,       1.0 / 362880.0,         -1.0 / 5040.0,
                                      1.0 / 120.0,             -1.0 / 6.0};
    static const double cos_coef[] = {-1.0 / 6402373705728000.0, 1.0 / 20922789888000.0, -1.0 / 87178291200.0,
                                      1.0 / 479001600.0,         -1.0 / 3628800.0,       1.0 / 40320.0,
                                      -1.0 / 720.0,              1.0 / 24.0,             -1.0 / 2.0};
    double z = r * r, ps = 0.0, pc = 0.0;
    for (int i = 0; i < 8; i++) ps = ps * z + sin_coef[i];
    for (int i = 0; i < 9; i++) pc = pc * z + cos_coef[i];
    double sr = r + r * z * ps, cr = 1.0 + z * pc;
    switch (k & 3) { /* the quadrant: sin and cos of r turned by k quarter turns */
    case 0: *s = sr, *c = cr; break;
    case 1: *s = cr, *c = -sr; break;
    case 2: *s = -sr, *c = -cr; break;
    default: *s = -cr, *c = sr; break;
    }
}

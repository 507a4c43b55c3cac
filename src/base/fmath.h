/* fmath.h - the natural logarithm, sine and cosine, in place of libm's
 * pow, log, sin and cos: their static musl code (a 4 KB table for pow, the
 * large-argument reduction of sin and cos) was 13 KB of every binary for
 * one table of RoPE angles per token and layer (and the Jinja engine's
 * `**` of floats, and YaRN's set-up).
 *
 * Both are accurate to about an ulp of a double: the angles are rounded to
 * float afterwards, so the tables equal those made with libm except where
 * a value lies within about 1e-16 of a float rounding boundary (then one
 * float ulp apart; tests/test_rope_math.c counts them). llama.cpp computes
 * the same angles in float, far less precisely at long positions
 * (docs/building.md, "Binary size"). */
#ifndef PITH_FMATH_H
#define PITH_FMATH_H

/* Natural logarithm of a positive, finite, normal x (RoPE's base: the
 * model's rope.freq_base, 1e-3 to 1e12). */
double fmath_log(double x);

/* sin(x) and cos(x). The argument reduction is exact for |x| < 1e8 (the
 * angle of a position up to 10^8); beyond, the error grows to about an ulp
 * of x, the precision x itself has. */
void fmath_sincos(double x, double *s, double *c);

#endif

/* test_format.c - src/base/format.c, pith's printf formatting (what the
 * static builds' snprintf, fprintf, ... are), against the host C library's
 * vsnprintf on random data: doubles of every kind through every float
 * conversion, integers of every length through every integer conversion,
 * strings, characters and pointers, each with random flags, widths and
 * precisions, and buffers too small for the text. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/format.h"
#include "check.h"
#include "tools/test_rng.h"

/* The reference is glibc's printf: in a static musl build snprintf is
 * format.c itself, and the test would compare it with itself. */
#ifndef __GLIBC__
#error "test_format compares format.c with glibc's printf: build it for the host"
#endif

static TestRng rng = {0x9e3779b97f4a7c15ull};

static uint64_t rand64(void)
{
    return (uint64_t)test_rng_u32(&rng) << 32 | test_rng_u32(&rng);
}

static unsigned below(unsigned n)
{
    return test_rng_u32(&rng) % n;
}

/* One comparison: the text and the returned length of format_buffer
 * against vsnprintf's, into a buffer of cap bytes (cap <= 4096). The first
 * few differences are printed as comments. */
static unsigned long compared, differed;

static void compare_v(size_t cap, const char *want_fmt, const char *fmt, va_list ap)
{
    static char want[4096], got[4096];
    va_list ap2;
    va_copy(ap2, ap);
    memset(want, 'W', sizeof want);
    memset(got, 'W', sizeof got);
    int n_want = vsnprintf(want, cap, want_fmt, ap);
    size_t n_got = format_buffer(got, cap, fmt, ap2);
    va_end(ap2);
    compared++;
    if (n_want < 0 || n_got != (size_t)n_want || memcmp(want, got, sizeof want) != 0) {
        if (differed++ < 10)
            printf("# \"%s\" (cap %zu): vsnprintf %d \"%.80s\", format_buffer %zu \"%.80s\"\n", fmt, cap, n_want, want,
                   n_got, got);
    }
}

/* The same arguments through want_fmt (vsnprintf) and fmt (format_buffer). */
static void compare_ref(const char *want_fmt, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    compare_v(4096, want_fmt, fmt, ap);
    va_end(ap);
}

static void compare(size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    compare_v(cap, fmt, fmt, ap);
    va_end(ap);
}

/* A random conversion specification: some of the flags, maybe a width,
 * maybe a precision (from 0 to max_prec), then length and conv. */
typedef struct {
    char flags[8];
    int width, prec; /* -1: none */
} RandomSpec;

static void spec_text(char *spec, size_t cap, const RandomSpec *r, const char *length, char conv)
{
    char width[16] = "", prec[16] = "";
    if (r->width >= 0) snprintf(width, sizeof width, "%d", r->width);
    if (r->prec >= 0) snprintf(prec, sizeof prec, ".%d", r->prec);
    snprintf(spec, cap, "[%%%s%s%s%s%c]", r->flags, width, prec, length, conv);
}

static RandomSpec random_spec(char *spec, size_t cap, const char *flags, int max_prec, const char *length, char conv)
{
    RandomSpec r = {"", -1, -1};
    size_t nf = 0;
    for (const char *c = flags; *c; c++)
        if (below(3) == 0) r.flags[nf++] = *c;
    if (below(2)) r.width = (int)below(30);
    if (max_prec >= 0 && below(4)) r.prec = (int)below((unsigned)max_prec + 1);
    spec_text(spec, cap, &r, length, conv);
    return r;
}

/* ---- floats -------------------------------------------------------------- */

/* A double of one of several kinds: any bit pattern (every exponent, nan
 * with payloads), subnormals, small dyadic fractions and integers (the
 * exact ties of rounding), neighbours of powers of ten (the carries and %g's
 * switch between %f and %e), and the special values. */
static double random_double(void)
{
    static const double special[] = {0.0,     -0.0,         INFINITY, -INFINITY, NAN,      -NAN,  DBL_MIN, DBL_MAX,
                                     DBL_TRUE_MIN, -DBL_TRUE_MIN, 0.125, 2.5,       0.5,      1.5,   1e23,    0.05,
                                     0.1,     9.5,          999999.5, 9.9999995, 1e-5,     1e-4,  1e15,    1e16,
                                     1e22,    5e-324,       0.25,     0.375,     1.25e-308, 123456789012345678.0};
    double x;
    uint64_t bits;
    switch (below(6)) {
    case 0:
        bits = rand64();
        memcpy(&x, &bits, sizeof x);
        return x;
    case 1: /* subnormal */
        bits = (rand64() & 0x800fffffffffffffull) >> (below(52));
        memcpy(&x, &bits, sizeof x);
        return x;
    case 2: /* i / 2^j */
        return ldexp((double)(int32_t)(test_rng_u32(&rng) >> below(32)), -(int)below(30));
    case 3: /* an integer, up to 2^64 */
        return (double)(rand64() >> below(64)) * (below(2) ? 1 : -1);
    case 4: { /* next to 10^k */
        x = pow(10.0, (double)((int)below(61) - 30));
        for (unsigned i = below(4); i > 0; i--) x = nextafter(x, below(2) ? INFINITY : 0.0);
        return x;
    }
    default: return special[below(sizeof special / sizeof special[0])];
    }
}

/* C11's %#g (7.21.6.1: style e or f by the exponent X that style e would
 * have, trailing zeros kept) as glibc's %#e or %#f with the same flags and
 * width. glibc 2.36's own %#g drops the zeros when rounding carries the
 * value to the next power of ten and so into style e: %#g of 999999.9999999999
 * is "1.e+06" there, "1.00000e+06" in C11 and musl. */
static unsigned long glibc_alt_g;

static void compare_alt_g(const RandomSpec *r, char conv, const char *spec, double x)
{
    char e[64], want_spec[64], glibc[4096], ref[4096];
    int p = r->prec < 0 ? 6 : r->prec ? r->prec : 1;
    snprintf(e, sizeof e, "%.*e", p - 1, x);
    const char *exp = strchr(e, 'e');
    if (!exp) { /* inf, nan */
        compare(4096, spec, x);
        return;
    }
    int big = conv == 'G', x10 = atoi(exp + 1);
    RandomSpec want = *r;
    int fixed = x10 < p && x10 >= -4;
    want.prec = fixed ? p - 1 - x10 : p - 1;
    spec_text(want_spec, sizeof want_spec, &want, "", fixed ? (big ? 'F' : 'f') : (big ? 'E' : 'e'));
    snprintf(glibc, sizeof glibc, spec, x);
    snprintf(ref, sizeof ref, want_spec, x);
    glibc_alt_g += strcmp(glibc, ref) != 0;
    compare_ref(want_spec, spec, x);
}

static void test_floats(void)
{
    compared = differed = 0;
    unsigned long alt_g = 0;
    static const char convs[] = "fFeEgG";
    char spec[64];
    for (int i = 0; i < 12000; i++) {
        double x = random_double();
        for (int c = 0; c < 6; c++) {
            RandomSpec r = random_spec(spec, sizeof spec, "-+ 0#", 20, below(8) ? "" : "l", convs[c]);
            if ((convs[c] | 32) == 'g' && strchr(r.flags, '#')) {
                compare_alt_g(&r, convs[c], spec, x);
                alt_g++;
            } else {
                compare(4096, spec, x);
            }
        }
        if (i % 6 == 0) { /* every precision from 0 to 20 */
            for (int p = 0; p <= 20; p++) compare(4096, "%.*f|%.*e|%.*g", p, x, p, x, p, x);
        }
    }
    unsigned long random_cases = compared;
    /* the longest expansions: every digit of the smallest, the largest and
     * some random doubles */
    static const double wide[] = {DBL_TRUE_MIN, DBL_MIN, DBL_MAX, 0x1.fffffffffffffp-1022, 1.0 / 3};
    for (int i = 0; i < 5; i++) compare(4096, "%.1100f|%.800e|%.800g", wide[i], wide[i], wide[i]);
    for (int i = 0; i < 200; i++) {
        double x = random_double();
        compare(4096, "%.1080f", x);
    }
    CHECK(differed == 0, "format_buffer equals vsnprintf on %lu random doubles' %%f %%F %%e %%E %%g %%G "
                         "(random flags, widths, precisions 0..20), and on %lu with 800-1100 digits (%lu differ)",
          random_cases, compared - random_cases, differed);
    printf("# of them %lu %%#g and %%#G, compared with C11's %%#g through glibc's %%#e and %%#f: glibc's own %%#g "
           "differs on %lu of them\n", alt_g, glibc_alt_g);
}

/* ---- integers ------------------------------------------------------------ */

static void test_integers(void)
{
    compared = differed = 0;
    static const char *const lengths[] = {"", "hh", "h", "l", "ll", "z", "j", "t"};
    static const char convs[] = "diuoxX";
    char spec[64];
    for (int i = 0; i < 20000; i++) {
        uint64_t v = rand64() >> below(64);
        if (below(2)) v = 0 - v;
        if (below(16) == 0) v = below(3); /* 0, 1, 2: precision 0 and # edge cases */
        int len = (int)below(8);
        (void)random_spec(spec, sizeof spec, "-+ 0#", 25, lengths[len], convs[below(6)]);
        switch (len) {
        case 0:
        case 1:
        case 2: compare(4096, spec, (int)v); break;
        case 3: compare(4096, spec, (long)v); break;
        case 4: compare(4096, spec, (long long)v); break;
        case 5: compare(4096, spec, (size_t)v); break;
        case 6: compare(4096, spec, (intmax_t)v); break;
        default: compare(4096, spec, (ptrdiff_t)v); break;
        }
    }
    static const long long edges[] = {0, 1, -1, INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN, 255, 256, -128, 65535};
    for (int i = 0; i < 11; i++)
        compare(4096, "%lld|%llu|%llo|%llx|%#llX|%d|%hd|%hhd|%hhu|%+.0lld|%#.0llo|%#.0llx", edges[i],
                (unsigned long long)edges[i], (unsigned long long)edges[i], (unsigned long long)edges[i],
                (unsigned long long)edges[i], (int)edges[i], (int)edges[i], (int)edges[i], (int)edges[i], edges[i],
                (unsigned long long)edges[i], (unsigned long long)edges[i]);
    CHECK(differed == 0, "format_buffer equals vsnprintf on %lu random integers of every length through %%d %%i %%u "
                         "%%o %%x %%X (random flags, widths, precisions; %lu differ)",
          compared, differed);
}

/* ---- strings, characters, pointers, %%, small buffers --------------------- */

static void test_text(void)
{
    compared = differed = 0;
    char spec[64], str[48];
    for (int i = 0; i < 5000; i++) {
        size_t n = below(40);
        for (size_t k = 0; k < n; k++) str[k] = (char)(1 + below(255));
        str[n] = '\0';
        (void)random_spec(spec, sizeof spec, "-", 50, "", 's');
        compare(4096, spec, str);
        (void)random_spec(spec, sizeof spec, "-", -1, "", 'c');
        compare(4096, spec, (int)below(256));
        (void)random_spec(spec, sizeof spec, "-", -1, "", 'p');
        compare(4096, spec, below(8) ? (void *)(uintptr_t)(rand64() >> below(64)) : NULL);
    }
    compare(4096, "%s|%10s|%-10s|%.6s|%.8s", (char *)NULL, (char *)NULL, (char *)NULL, (char *)NULL, (char *)NULL);
    compare(4096, "%%|a%%b%%%%|%c%c", 'x', 0);
    unsigned long text = compared;
    /* every capacity from 0 to past the text's length */
    for (int i = 0; i < 300; i++) {
        double x = random_double();
        long long v = (long long)rand64();
        for (size_t cap = 0; cap < 64; cap++) compare(cap, "%s=%lld %.3e%-6c|%g", "name", v, x, 'z', x);
    }
    CHECK(differed == 0, "format_buffer equals vsnprintf on %lu random strings with precisions, characters and "
                         "pointers, and %lu texts cut to capacities 0..63 (%lu differ)",
          text, compared - text, differed);
}

/* What glibc does not decide: conversions format.c does not know are copied
 * as written and take no argument. */
static size_t own(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = format_buffer(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

static void test_unknown(void)
{
    char buf[128];
    size_t n = own(buf, sizeof buf, "%y|%Lf|%n|%a|%lc|%hs|%d|%", 7);
    CHECK(n == strlen(buf) && strcmp(buf, "%y|%Lf|%n|%a|%lc|%hs|7|%") == 0,
          "format_buffer copies unknown conversions as written and takes no argument for them (\"%s\")", buf);
    n = own(buf, sizeof buf, "%-5", 7);
    CHECK(n == 3 && strcmp(buf, "%-5") == 0, "format_buffer copies a conversion cut by the end of the format");
    n = own(NULL, 0, "%d", 12345);
    CHECK(n == 5, "format_buffer into no buffer (cap 0) returns the length, writes nothing");
}

/* A few values written out, so that the reference is not glibc alone. */
static void test_known(void)
{
    char buf[128];
    own(buf, sizeof buf, "%.0f %.0f %.0f %.2f %.1f %.17g %.0f %g %.3f %e %G %#.0e %+.1f % .0f", 0.5, 1.5, 2.5, 0.125,
        0.25, 0.1, 1e23, 1e-5, 5e-324, DBL_MAX, 1e100, 3.0, -0.0, -NAN);
    CHECK(strcmp(buf, "0 2 2 0.12 0.2 0.10000000000000001 99999999999999991611392 1e-05 0.000 1.797693e+308 1E+100 "
                      "3.e+00 -0.0 -nan") == 0,
          "format_buffer rounds ties to even and prints exact values (\"%s\")", buf);
}

int main(void)
{
    test_floats();
    test_integers();
    test_text();
    test_unknown();
    test_known();
    CHECK_DONE();
}

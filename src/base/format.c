/* format.c - printf's formatting without long double (see format.h).
 *
 * A float is printed from its exact decimal value: a double is m * 2^e
 * with integers m < 2^53 and -1074 <= e <= 971, so |x| is the integer
 * m * 2^e when e >= 0, and m * 5^-e / 10^-e otherwise: at most 767
 * significant digits, computed in base 10^9 on the stack. Rounding that
 * digit string to the precision is then exact, ties to even included. */
#include "format.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* The flags, in the order of their characters in FLAG_CHARS. */
enum { LEFT = 1, PLUS = 2, SPACE = 4, ZERO = 8, ALT = 16 };
static const char FLAG_CHARS[] = "-+ 0#";

/* The length modifiers: the single letters in the order of LENGTH_CHARS. */
enum { LEN_NONE, LEN_H, LEN_L, LEN_Z, LEN_J, LEN_T, LEN_HH, LEN_LL };
static const char LENGTH_CHARS[] = "hlzjt";

/* One conversion, %[flags][width][.precision][length]conv. */
typedef struct {
    unsigned flags;
    size_t width;
    int prec; /* -1: none given */
    char conv;
} Spec;

typedef struct {
    FormatSink *sink;
    size_t len; /* bytes put so far: format_v's result */
} Out;

static void put(Out *o, const char *bytes, size_t n)
{
    if (n) o->sink->put(o->sink, bytes, n);
    o->len += n;
}

static void repeat(Out *o, char c, size_t n)
{
    char block[32];
    memset(block, c, sizeof block);
    for (; n > sizeof block; n -= sizeof block) put(o, block, sizeof block);
    put(o, block, n);
}

/* A field of len bytes (its prefix included) padded to the width: spaces
 * before it, or zeros after its prefix (a sign, 0x); spaces after it when
 * left-justified (pad_after). */
static void pad_before(Out *o, const Spec *s, size_t len, const char *prefix, size_t plen, int zeros)
{
    size_t fill = !(s->flags & LEFT) && s->width > len ? s->width - len : 0;
    if (!zeros) repeat(o, ' ', fill);
    put(o, prefix, plen);
    if (zeros) repeat(o, '0', fill);
}

static void pad_after(Out *o, const Spec *s, size_t len)
{
    if ((s->flags & LEFT) && s->width > len) repeat(o, ' ', s->width - len);
}

static void format_str(Out *o, const Spec *s, const char *str, size_t n)
{
    pad_before(o, s, n, "", 0, 0);
    put(o, str, n);
    pad_after(o, s, n);
}

/* d i u o x X: the magnitude v and the sign character (0: none). */
static void format_int(Out *o, const Spec *s, uintmax_t v, char sign)
{
    char digits[3 * sizeof v], *end = digits + sizeof digits, *p = end;
    unsigned base = s->conv == 'o' ? 8 : s->conv == 'x' || s->conv == 'X' ? 16 : 10;
    const char *set = s->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    for (; v; v /= base) *--p = set[v % base];
    size_t nd = (size_t)(end - p), prec = s->prec < 0 ? 1 : (size_t)s->prec;
    char prefix[2] = {sign, s->conv};
    size_t plen = sign != 0;
    if ((s->flags & ALT) && base == 16 && nd) prefix[0] = '0', plen = 2;
    if ((s->flags & ALT) && base == 8 && prec <= nd) prec = nd + 1; /* a leading 0 */
    size_t zeros = prec > nd ? prec - nd : 0, len = plen + zeros + nd;
    pad_before(o, s, len, prefix, plen, (s->flags & ZERO) && s->prec < 0);
    repeat(o, '0', zeros);
    put(o, p, nd);
    pad_after(o, s, len);
}

/* ---- floats ------------------------------------------------------------ */

/* The decimal value of a double's magnitude: 0.d[0]d[1]...d[n-1] * 10^point,
 * d without trailing zeros; zero has n = 0 (and point 1). The most digits:
 * 2^53 * 5^1074 < 10^767 (the smallest exponent), 2^1024 < 10^309. */
typedef struct {
    char d[768];
    int n, point;
} Decimal;

#define LIMB 1000000000u

static void decimal_of(Decimal *dec, uint64_t bits)
{
    uint64_t m = bits & 0xfffffffffffffull;
    int biased = (int)(bits >> 52 & 0x7ff);
    if (biased) m |= 1ull << 52;
    else biased = 1; /* subnormal */
    int e = biased - 1075; /* |x| = m * 2^e */
    dec->n = 0;
    dec->point = 1;
    if (!m) return;
    /* N = m * 2^e or m * 5^-e in base 10^9, the lowest limb first,
     * multiplied by 2^12 or 5^12 at a time (the carry stays one limb) */
    uint32_t limb[86]; /* 767 digits */
    int nl = 0;
    for (; m; m /= LIMB) limb[nl++] = (uint32_t)(m % LIMB);
    for (int k = e < 0 ? -e : e; k > 0; k -= 12) {
        uint32_t f = 1;
        for (int j = 0; j < k && j < 12; j++) f *= e < 0 ? 5 : 2;
        uint64_t carry = 0;
        for (int i = 0; i < nl; i++) {
            uint64_t t = (uint64_t)limb[i] * f + carry;
            limb[i] = (uint32_t)(t % LIMB);
            carry = t / LIMB;
        }
        if (carry) limb[nl++] = (uint32_t)carry;
    }
    /* nine digits per limb, the highest without its leading zeros */
    int n = 0;
    for (int i = nl - 1; i >= 0; i--) {
        char nine[9];
        uint32_t v = limb[i];
        for (int j = 8; j >= 0; j--, v /= 10) nine[j] = (char)('0' + v % 10);
        int skip = 0;
        while (i == nl - 1 && nine[skip] == '0') skip++;
        memcpy(dec->d + n, nine + skip, (size_t)(9 - skip));
        n += 9 - skip;
    }
    dec->point = n + (e < 0 ? e : 0);
    while (dec->d[n - 1] == '0') n--;
    dec->n = n;
}

/* Keeps the first keep digits (any number, even <= 0: the value may round
 * to 0 or up to 10^point), rounded to nearest, ties to even. */
static void decimal_round(Decimal *dec, int64_t keep)
{
    if (keep >= dec->n) return;
    const char *d = dec->d;
    int k = (int)(keep > 0 ? keep : 0);
    int up = keep >= 0 && (d[k] > '5' || (d[k] == '5' && (k + 1 < dec->n || (k > 0 && (d[k - 1] & 1)))));
    while (k > 0 && (up ? d[k - 1] == '9' : d[k - 1] == '0')) k--; /* the carry, and the zeros it leaves */
    dec->n = k;
    if (!up) return;
    if (k > 0) {
        dec->d[k - 1]++;
    } else {
        dec->d[0] = '1';
        dec->n = 1;
        dec->point++;
    }
}

/* The digits of positions [from, to): zeros before d and after its end. */
static void put_digits(Out *o, const Decimal *dec, int64_t from, int64_t to)
{
    int64_t have_from = from < 0 ? 0 : from, have_to = to < dec->n ? to : dec->n;
    if (have_from >= have_to) {
        repeat(o, '0', (size_t)(to - from));
        return;
    }
    repeat(o, '0', (size_t)(have_from - from));
    put(o, dec->d + have_from, (size_t)(have_to - have_from));
    repeat(o, '0', (size_t)(to - have_to));
}

/* %f: prec digits after the point. */
static void float_fixed(Out *o, const Spec *s, Decimal *dec, int64_t prec, char sign)
{
    decimal_round(dec, dec->point + prec);
    int dot = prec > 0 || (s->flags & ALT);
    size_t len = (size_t)(sign != 0) + (size_t)(dec->point > 0 ? dec->point : 1) + (size_t)dot + (size_t)prec;
    pad_before(o, s, len, &sign, sign != 0, s->flags & ZERO);
    if (dec->point > 0) put_digits(o, dec, 0, dec->point);
    else put(o, "0", 1);
    put(o, ".", (size_t)dot);
    put_digits(o, dec, dec->point, dec->point + prec);
    pad_after(o, s, len);
}

/* %e: one digit, prec after the point, the exponent in two digits or three. */
static void float_exp(Out *o, const Spec *s, Decimal *dec, int64_t prec, char sign)
{
    decimal_round(dec, prec + 1);
    int x = dec->point - 1;
    char exp[5] = {(s->conv & 32) ? 'e' : 'E', x < 0 ? '-' : '+'};
    unsigned ax = (unsigned)(x < 0 ? -x : x);
    size_t elen = ax >= 100 ? 5 : 4;
    for (size_t i = elen - 1; i >= 2; i--, ax /= 10) exp[i] = (char)('0' + ax % 10);
    int dot = prec > 0 || (s->flags & ALT);
    size_t len = (size_t)(sign != 0) + 1 + (size_t)dot + (size_t)prec + elen;
    pad_before(o, s, len, &sign, sign != 0, s->flags & ZERO);
    put_digits(o, dec, 0, 1);
    put(o, ".", (size_t)dot);
    put_digits(o, dec, 1, 1 + prec);
    put(o, exp, elen);
    pad_after(o, s, len);
}

/* f F e E g G */
static void format_float(Out *o, const Spec *s, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    char sign = bits >> 63 ? '-' : (s->flags & PLUS) ? '+' : (s->flags & SPACE) ? ' ' : 0;
    int upper = !(s->conv & 32);
    if ((bits >> 52 & 0x7ff) == 0x7ff) { /* inf, nan: never zero-padded */
        const char *word = bits << 12 ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
        size_t len = (size_t)(sign != 0) + 3;
        pad_before(o, s, len, &sign, sign != 0, 0);
        put(o, word, 3);
        pad_after(o, s, len);
        return;
    }
    Decimal dec;
    decimal_of(&dec, bits);
    int64_t prec = s->prec < 0 ? 6 : s->prec;
    char c = (char)(s->conv | 32);
    if (c == 'f') {
        float_fixed(o, s, &dec, prec, sign);
    } else if (c == 'e') {
        float_exp(o, s, &dec, prec, sign);
    } else { /* %g: P significant digits; as %f when the exponent X is in [-4, P), else as %e */
        int64_t p = prec ? prec : 1;
        decimal_round(&dec, p);
        int64_t exp10 = dec.point - 1;
        int fixed = exp10 >= -4 && exp10 < p;
        int64_t after = fixed ? p - 1 - exp10 : p - 1; /* digits after the point */
        if (!(s->flags & ALT)) {                   /* without trailing zeros */
            int64_t have = dec.n - (fixed ? dec.point : 1);
            if (after > have) after = have > 0 ? have : 0;
        }
        if (fixed) float_fixed(o, s, &dec, after, sign);
        else float_exp(o, s, &dec, after, sign);
    }
}

/* ---- arguments and the format string ------------------------------------ */

static intmax_t arg_signed(va_list *ap, int length)
{
    switch (length) {
    case LEN_HH: return (signed char)va_arg(*ap, int);
    case LEN_H: return (short)va_arg(*ap, int);
    case LEN_L: return va_arg(*ap, long);
    case LEN_LL: return va_arg(*ap, long long);
    case LEN_Z:
    case LEN_T: return va_arg(*ap, ptrdiff_t);
    case LEN_J: return va_arg(*ap, intmax_t);
    default: return va_arg(*ap, int);
    }
}

static uintmax_t arg_unsigned(va_list *ap, int length)
{
    switch (length) {
    case LEN_HH: return (unsigned char)va_arg(*ap, unsigned);
    case LEN_H: return (unsigned short)va_arg(*ap, unsigned);
    case LEN_L: return va_arg(*ap, unsigned long);
    case LEN_LL: return va_arg(*ap, unsigned long long);
    case LEN_Z:
    case LEN_T: return va_arg(*ap, size_t);
    case LEN_J: return va_arg(*ap, uintmax_t);
    default: return va_arg(*ap, unsigned);
    }
}

/* A decimal number in the format string, saturated at INT_MAX. */
static int parse_count(const char **f)
{
    int n = 0;
    for (; **f >= '0' && **f <= '9'; (*f)++) n = n > (INT_MAX - 9) / 10 ? INT_MAX : n * 10 + (**f - '0');
    return n;
}

size_t format_v(FormatSink *sink, const char *fmt, va_list ap)
{
    va_list args; /* a copy, so that helpers can take it by address */
    va_copy(args, ap);
    Out o = {sink, 0};
    while (*fmt) {
        const char *start = fmt;
        while (*fmt && *fmt != '%') fmt++;
        put(&o, start, (size_t)(fmt - start));
        if (!*fmt) break;
        start = fmt++;
        Spec s = {0, 0, -1, 0};
        for (const char *f; *fmt && (f = strchr(FLAG_CHARS, *fmt)); fmt++) s.flags |= 1u << (f - FLAG_CHARS);
        if (*fmt == '*') {
            int w = va_arg(args, int);
            if (w < 0) s.flags |= LEFT;
            s.width = w < 0 ? 0 - (size_t)w : (size_t)w;
            fmt++;
        } else {
            s.width = (size_t)parse_count(&fmt);
        }
        if (*fmt == '.') {
            fmt++;
            if (*fmt == '*') {
                int p = va_arg(args, int);
                s.prec = p < 0 ? -1 : p;
                fmt++;
            } else {
                s.prec = parse_count(&fmt);
            }
        }
        int length = LEN_NONE;
        if ((fmt[0] == 'h' || fmt[0] == 'l') && fmt[1] == fmt[0]) {
            length = fmt[0] == 'h' ? LEN_HH : LEN_LL;
            fmt += 2;
        } else if (*fmt && strchr(LENGTH_CHARS, *fmt)) {
            length = LEN_H + (int)(strchr(LENGTH_CHARS, *fmt++) - LENGTH_CHARS);
        }
        s.conv = *fmt;
        const char *convs = length == LEN_NONE ? "diuoxXpcsfFeEgG%" : length == LEN_L ? "diuoxXfFeEgG" : "diuoxX";
        if (!s.conv || !strchr(convs, s.conv)) { /* as written, no argument taken */
            put(&o, start, (size_t)(fmt - start) + (s.conv != 0));
            fmt += s.conv != 0;
            continue;
        }
        fmt++;
        if (s.conv == 'd' || s.conv == 'i') {
            intmax_t v = arg_signed(&args, length);
            char sign = v < 0 ? '-' : (s.flags & PLUS) ? '+' : (s.flags & SPACE) ? ' ' : 0;
            format_int(&o, &s, v < 0 ? 0 - (uintmax_t)v : (uintmax_t)v, sign);
        } else if (strchr("uoxX", s.conv)) {
            format_int(&o, &s, arg_unsigned(&args, length), 0);
        } else if (s.conv == 'p') {
            const void *ptr = va_arg(args, const void *);
            s.flags |= ALT;
            s.conv = 'x';
            if (ptr) format_int(&o, &s, (uintptr_t)ptr, 0);
            else format_str(&o, &s, "(nil)", 5);
        } else if (s.conv == 'c') {
            char c = (char)va_arg(args, int);
            format_str(&o, &s, &c, 1);
        } else if (s.conv == 's') {
            const char *str = va_arg(args, const char *);
            if (!str) str = s.prec < 0 || s.prec >= 6 ? "(null)" : "";
            size_t n = 0;
            while ((s.prec < 0 || n < (size_t)s.prec) && str[n]) n++;
            format_str(&o, &s, str, n);
        } else if (s.conv == '%') {
            put(&o, "%", 1);
        } else {
            format_float(&o, &s, va_arg(args, double));
        }
    }
    va_end(args);
    return o.len;
}

/* ---- into a buffer: vsnprintf ------------------------------------------- */

typedef struct {
    FormatSink sink;
    char *buf;
    size_t room, len; /* room: the bytes before the NUL */
} BufferSink;

static void buffer_put(FormatSink *sink, const char *bytes, size_t n)
{
    BufferSink *b = (BufferSink *)sink;
    if (n > b->room - b->len) n = b->room - b->len;
    if (!n) return;
    memcpy(b->buf + b->len, bytes, n);
    b->len += n;
}

size_t format_buffer(char *buf, size_t cap, const char *fmt, va_list ap)
{
    BufferSink b = {{buffer_put}, buf, cap ? cap - 1 : 0, 0};
    size_t len = format_v(&b.sink, fmt, ap);
    if (cap) buf[b.len] = '\0';
    return len;
}

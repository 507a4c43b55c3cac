/* json.c - strict, bounded JSON pull reader and string writer. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_init(Json *j, const char *src, size_t len, const char *name)
{
    memset(j, 0, sizeof *j);
    j->src = src;
    j->len = len;
    j->name = name ? name : "json";
}

int json_fail(Json *j, size_t pos, const char *fmt, ...)
{
    if (j->failed) return -1;
    j->failed = 1;
    j->status = PITH_BAD_INPUT;
    int n = snprintf(j->err, sizeof j->err, "%s: byte %zu: ", j->name, pos);
    if (n < 0 || (size_t)n >= sizeof j->err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err + n, sizeof j->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

const char *json_type_name(JsonType t)
{
    static const char *names[] = {"nothing", "object", "array", "string", "number", "true", "false", "null"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static void skip_ws(Json *j)
{
    while (j->pos < j->len) {
        char c = j->src[j->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        j->pos++;
    }
}

/* Describes the byte at pos for error messages. */
static const char *what_is(const Json *j, size_t pos, char *buf, size_t cap)
{
    if (pos >= j->len) return "end of text";
    unsigned char c = (unsigned char)j->src[pos];
    if (c >= 0x20 && c < 0x7f) snprintf(buf, cap, "'%c'", c);
    else snprintf(buf, cap, "byte 0x%02x", c);
    return buf;
}

JsonType json_peek(Json *j)
{
    if (j->failed) return JSON_NONE;
    skip_ws(j);
    if (j->pos >= j->len) return JSON_NONE;
    switch (j->src[j->pos]) {
    case '{': return JSON_OBJECT;
    case '[': return JSON_ARRAY;
    case '"': return JSON_STRING;
    case 't': return JSON_TRUE;
    case 'f': return JSON_FALSE;
    case 'n': return JSON_NULL;
    default:
        if (j->src[j->pos] == '-' || (j->src[j->pos] >= '0' && j->src[j->pos] <= '9')) return JSON_NUMBER;
        return JSON_NONE;
    }
}

static int expect_value(Json *j, JsonType want)
{
    JsonType t = json_peek(j);
    if (j->failed) return -1;
    if (t == want) return 0;
    char b[16];
    if (t == JSON_NONE) return json_fail(j, j->pos, "expected %s, found %s", json_type_name(want), what_is(j, j->pos, b, sizeof b));
    return json_fail(j, j->pos, "expected %s, found %s", json_type_name(want), json_type_name(t));
}

int json_enter(Json *j, char open)
{
    if (expect_value(j, open == '{' ? JSON_OBJECT : JSON_ARRAY) < 0) return -1;
    if (j->depth >= JSON_MAX_DEPTH) return json_fail(j, j->pos, "nested deeper than %d levels", JSON_MAX_DEPTH);
    j->pos++;
    j->depth++;
    j->first[j->depth] = 1;
    return 0;
}

int json_next(Json *j, char close)
{
    if (j->failed) return -1;
    if (j->depth == 0) return json_fail(j, j->pos, "json_next outside a container");
    skip_ws(j);
    char b[16];
    if (j->pos >= j->len) return json_fail(j, j->pos, "unexpected end of text (missing '%c')", close);
    char c = j->src[j->pos];
    if (c == close) {
        j->pos++;
        j->depth--;
        return 0;
    }
    if (j->first[j->depth]) {
        j->first[j->depth] = 0;
        return 1;
    }
    if (c != ',') return json_fail(j, j->pos, "expected ',' or '%c', found %s", close, what_is(j, j->pos, b, sizeof b));
    j->pos++;
    skip_ws(j);
    if (j->pos < j->len && j->src[j->pos] == close) return json_fail(j, j->pos, "trailing comma before '%c'", close);
    return 1;
}

int json_utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    if (n == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int len;
    unsigned min;
    if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80, c &= 0x1f;
    else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800, c &= 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000, c &= 0x07;
    else return 0;
    if ((size_t)len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    *cp = c;
    return len;
}

static int hex4(Json *j, size_t at, unsigned *v)
{
    unsigned x = 0;
    for (int i = 0; i < 4; i++) {
        if (at + (size_t)i >= j->len) return json_fail(j, at + (size_t)i, "truncated \\u escape");
        char c = j->src[at + (size_t)i];
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else return json_fail(j, at + (size_t)i, "bad hex digit in \\u escape");
        x = x * 16 + d;
    }
    *v = x;
    return 0;
}

/* Appends bytes to out (when non-NULL), failing if they do not fit. */
static int put(Json *j, char *out, size_t cap, size_t *n, const char *s, size_t k)
{
    if (k > cap - *n) {
        json_fail(j, j->pos, "text longer than its buffer (%zu bytes)", cap);
        j->status = PITH_NO_MEMORY;
        return -1;
    }
    if (out) memcpy(out + *n, s, k);
    *n += k;
    return 0;
}

static size_t utf8_encode(unsigned cp, char *b)
{
    if (cp < 0x80) {
        b[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        b[0] = (char)(0xc0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (char)(0xe0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    b[0] = (char)(0xf0 | (cp >> 18));
    b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    b[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Reads one character of a string literal at j->pos (an escape or one
 * UTF-8 sequence) into b[0..*k). Returns 1, or 0 when the closing quote was
 * consumed, or -1 on error. */
static int read_char(Json *j, char b[4], size_t *k)
{
    if (j->pos >= j->len) return json_fail(j, j->pos, "unterminated string");
    unsigned char c = (unsigned char)j->src[j->pos];
    if (c == '"') {
        j->pos++;
        return 0;
    }
    if (c < 0x20) return json_fail(j, j->pos, "control character 0x%02x in string (must be escaped)", c);
    if (c != '\\') {
        unsigned cp;
        int n = json_utf8_decode((const unsigned char *)j->src + j->pos, j->len - j->pos, &cp);
        if (n == 0) return json_fail(j, j->pos, "invalid UTF-8 in string");
        memcpy(b, j->src + j->pos, (size_t)n);
        *k = (size_t)n;
        j->pos += (size_t)n;
        return 1;
    }
    size_t at = j->pos;
    if (at + 1 >= j->len) return json_fail(j, at, "unterminated string");
    char e = j->src[at + 1];
    char simple = 0;
    switch (e) {
    case '"': simple = '"'; break;
    case '\\': simple = '\\'; break;
    case '/': simple = '/'; break;
    case 'b': simple = '\b'; break;
    case 'f': simple = '\f'; break;
    case 'n': simple = '\n'; break;
    case 'r': simple = '\r'; break;
    case 't': simple = '\t'; break;
    case 'u': break;
    default: return json_fail(j, at, "bad escape '\\%c'", (e >= 0x20 && e < 0x7f) ? e : '?');
    }
    if (simple) {
        b[0] = simple;
        *k = 1;
        j->pos = at + 2;
        return 1;
    }
    unsigned u;
    if (hex4(j, at + 2, &u) < 0) return -1;
    size_t next = at + 6;
    if (u >= 0xdc00 && u <= 0xdfff) return json_fail(j, at, "lone low surrogate \\u%04x", u);
    if (u >= 0xd800 && u <= 0xdbff) {
        unsigned lo;
        if (next + 1 >= j->len || j->src[next] != '\\' || j->src[next + 1] != 'u')
            return json_fail(j, at, "high surrogate \\u%04x not followed by a low one", u);
        if (hex4(j, next + 2, &lo) < 0) return -1;
        if (lo < 0xdc00 || lo > 0xdfff) return json_fail(j, next, "high surrogate \\u%04x followed by \\u%04x", u, lo);
        u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        next += 6;
    }
    *k = utf8_encode(u, b);
    j->pos = next;
    return 1;
}

int json_string(Json *j, char *out, size_t cap, size_t *out_len)
{
    if (expect_value(j, JSON_STRING) < 0) return -1;
    size_t n = 0;
    j->pos++; /* opening quote */
    int r;
    char b[4];
    size_t k;
    while ((r = read_char(j, b, &k)) > 0)
        if (put(j, out, cap, &n, b, k) < 0) return -1;
    if (r < 0) return -1;
    if (out_len) *out_len = n;
    return 0;
}

int json_key(Json *j, char *out, size_t cap, size_t *out_len)
{
    if (json_peek(j) != JSON_STRING && !j->failed) {
        char b[16];
        return json_fail(j, j->pos, "expected a key (string), found %s", what_is(j, j->pos, b, sizeof b));
    }
    if (json_string(j, out, cap, out_len) < 0) return -1;
    skip_ws(j);
    if (j->pos >= j->len || j->src[j->pos] != ':') {
        char b[16];
        return json_fail(j, j->pos, "expected ':' after key, found %s", what_is(j, j->pos, b, sizeof b));
    }
    j->pos++;
    return 0;
}

/* text_to_double: decimal text to the nearest double, ties to even, as
 * strtod rounds it (strtod would link 6.7 KB of libc's long-double scanner
 * into the static binary; this is well under 1 KB). Up to 19 significant
 * digits times a power of ten up to 22 it is one exact operation; otherwise
 * exact big-integer arithmetic: the digits times 10^e, or the digits times
 * 2^k divided by 10^-e, rounded from the top 64 bits and whether anything
 * below them is nonzero. Digits after the first DEC_DIGITS significant ones
 * only say whether the rest is nonzero: no double lies halfway between two
 * neighbours with that many digits. */
enum { DEC_DIGITS = 800, BIG_LIMBS = 136 };
typedef struct {
    uint32_t limb[BIG_LIMBS]; /* little-endian, base 2^32 */
    int n;
} Big;

static void big_mul_add(Big *b, uint32_t mul, uint32_t add)
{
    uint64_t carry = add;
    for (int i = 0; i < b->n; i++) {
        carry += (uint64_t)b->limb[i] * mul;
        b->limb[i] = (uint32_t)carry;
        carry >>= 32;
    }
    if (carry) b->limb[b->n++] = (uint32_t)carry;
}

static int big_div(Big *b, uint32_t div) /* -> whether there was a remainder */
{
    uint64_t rem = 0;
    for (int i = b->n - 1; i >= 0; i--) {
        uint64_t cur = rem << 32 | b->limb[i];
        b->limb[i] = (uint32_t)(cur / div);
        rem = cur % div;
    }
    while (b->n > 0 && b->limb[b->n - 1] == 0) b->n--;
    return rem != 0;
}

static int big_bits(const Big *b)
{
    return b->n ? 32 * b->n - __builtin_clz(b->limb[b->n - 1]) : 0;
}

/* b (nonzero) times 10^e10, |b * 10^e10| below 10^311 and above 10^-326 */
static double big_to_double(Big *b, int e10)
{
    int exp2 = 0, sticky = 0;
    if (e10 >= 0) {
        for (; e10 >= 9; e10 -= 9) big_mul_add(b, 1000000000u, 0);
        for (; e10 > 0; e10--) big_mul_add(b, 10, 0);
    } else {
        /* 10^-e10 has at most -e10 * 3402 / 1024 + 1 bits (log2 10 < 3402 / 1024) */
        int k = -e10 * 3402 / 1024 + 1 - big_bits(b) + 66;
        if (k < 0) k = 0;
        exp2 = -k;
        for (; k >= 31; k -= 31) big_mul_add(b, 1u << 31, 0);
        if (k > 0) big_mul_add(b, 1u << k, 0);
        for (e10 = -e10; e10 >= 9; e10 -= 9) sticky |= big_div(b, 1000000000u);
        for (; e10 > 0; e10--) sticky |= big_div(b, 10);
    }
    int bits = big_bits(b), shift = bits - 64;
    uint64_t top = 0;
    for (int i = bits - 1; i >= shift; i--) top = top << 1 | (i >= 0 && (b->limb[i / 32] >> (i % 32) & 1));
    for (int i = 0; i < shift / 32; i++) sticky |= b->limb[i] != 0;
    if (shift > 0 && shift % 32) sticky |= (b->limb[shift / 32] & ((1u << (shift % 32)) - 1)) != 0;
    int e2 = exp2 + shift + 63; /* the value is in [2^e2, 2^(e2 + 1)) */
    if (e2 > 1023) return HUGE_VAL;
    int prec = e2 >= -1022 ? 53 : 53 - (-1022 - e2); /* fewer bits for a subnormal */
    if (prec <= 0) /* below the smallest subnormal, 2^-1074: it or zero */
        return prec == 0 && (top > 1ull << 63 || (top == 1ull << 63 && sticky)) ? 0x1p-1074 : 0;
    uint64_t keep = top >> (64 - prec), rest = top & ((1ull << (64 - prec)) - 1), half = 1ull << (63 - prec);
    if (rest > half || (rest == half && (sticky || (keep & 1)))) keep++;
    return ldexp((double)keep, e2 - prec + 1);
}

static void dec_append(Big *b, uint64_t *m, int64_t *kept, unsigned d)
{
    big_mul_add(b, 10, d);
    if ((*kept)++ < 19) *m = *m * 10 + d;
}

size_t text_to_double(const char *s, size_t len, double *value)
{
    size_t p = 0;
    while (p < len && (s[p] == ' ' || (s[p] >= '\t' && s[p] <= '\r'))) p++;
    int neg = 0;
    if (p < len && (s[p] == '+' || s[p] == '-')) neg = s[p++] == '-';
    Big b = {.n = 0};
    uint64_t m = 0;  /* the first 19 kept digits */
    int64_t sig = 0; /* digits from the first nonzero one */
    int64_t kept = 0, zeros = 0, frac = 0, digits = 0;
    int sticky = 0, point = 0;
    for (; p < len; p++) {
        if (s[p] == '.' && !point) {
            point = 1;
            continue;
        }
        if (s[p] < '0' || s[p] > '9') break;
        unsigned d = (unsigned)(s[p] - '0');
        digits++;
        frac += point;
        if (d == 0 && sig == 0) continue;
        sig++;
        if (d == 0) {
            zeros++; /* kept only if a nonzero digit follows */
        } else if (kept + zeros < DEC_DIGITS) {
            for (; zeros > 0; zeros--) dec_append(&b, &m, &kept, 0);
            dec_append(&b, &m, &kept, d);
        } else {
            sticky = 1;
        }
    }
    if (digits == 0) return 0;
    int64_t exp = 0;
    if (p < len && (s[p] == 'e' || s[p] == 'E')) {
        size_t q = p + 1;
        int eneg = 0;
        if (q < len && (s[q] == '+' || s[q] == '-')) eneg = s[q++] == '-';
        if (q < len && s[q] >= '0' && s[q] <= '9') {
            for (; q < len && s[q] >= '0' && s[q] <= '9'; q++)
                if (exp < 100000) exp = exp * 10 + (s[q] - '0');
            if (eneg) exp = -exp;
            p = q;
        }
    }
    int64_t e10 = sig - kept - frac + exp; /* the value is (the kept digits) * 10^e10 */
    double v;
    if (kept == 0) {
        v = 0;
    } else if (kept + e10 > 310) {
        v = HUGE_VAL;
    } else if (kept + e10 < -325) {
        v = 0;
    } else if (!sticky && kept <= 19 && m <= (1ull << 53) && e10 >= -22 && e10 <= 22) {
        double scale = 1;
        for (int64_t i = e10 < 0 ? -e10 : e10; i > 0; i--) scale *= 10; /* exact up to 10^22 */
        v = e10 < 0 ? (double)m / scale : (double)m * scale;
    } else {
        if (sticky) big_mul_add(&b, 10, 1), e10--; /* a digit 1 for the nonzero rest */
        v = big_to_double(&b, (int)e10);
    }
    *value = neg ? -v : v;
    return p;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int json_number(Json *j, const char **text, size_t *text_len, double *value)
{
    if (expect_value(j, JSON_NUMBER) < 0) return -1;
    size_t start = j->pos, p = j->pos;
    const char *s = j->src;
    if (p < j->len && s[p] == '-') p++;
    if (p >= j->len || !is_digit(s[p])) return json_fail(j, p, "expected a digit");
    if (s[p] == '0') {
        p++;
        if (p < j->len && is_digit(s[p])) return json_fail(j, p, "leading zero in number");
    } else {
        while (p < j->len && is_digit(s[p])) p++;
    }
    if (p < j->len && s[p] == '.') {
        p++;
        if (p >= j->len || !is_digit(s[p])) return json_fail(j, p, "expected a digit after '.'");
        while (p < j->len && is_digit(s[p])) p++;
    }
    if (p < j->len && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        if (p < j->len && (s[p] == '+' || s[p] == '-')) p++;
        if (p >= j->len || !is_digit(s[p])) return json_fail(j, p, "expected a digit in exponent");
        while (p < j->len && is_digit(s[p])) p++;
    }
    if (value) {
        /* numbers of 64 characters or more are refused */
        if (p - start >= 64) return json_fail(j, start, "number longer than %d characters", 63);
        text_to_double(s + start, p - start, value);
    }
    if (text) *text = s + start;
    if (text_len) *text_len = p - start;
    j->pos = p;
    return 0;
}

int json_literal(Json *j, JsonType *type)
{
    JsonType t = json_peek(j);
    if (j->failed) return -1;
    const char *word = t == JSON_TRUE ? "true" : t == JSON_FALSE ? "false" : t == JSON_NULL ? "null" : NULL;
    if (!word) return json_fail(j, j->pos, "expected true, false or null");
    size_t n = strlen(word);
    if (j->len - j->pos < n || memcmp(j->src + j->pos, word, n) != 0)
        return json_fail(j, j->pos, "invalid literal (expected '%s')", word);
    j->pos += n;
    if (type) *type = t;
    return 0;
}

/* Shared by json_skip (out == NULL, measuring into a dummy) and json_dump. */
static int dump_value(Json *j, char *out, size_t cap, size_t *n, int write)
{
    JsonType t = json_peek(j);
    if (j->failed) return -1;
    switch (t) {
    case JSON_OBJECT:
    case JSON_ARRAY: {
        char close = t == JSON_OBJECT ? '}' : ']';
        if (json_enter(j, t == JSON_OBJECT ? '{' : '[') < 0) return -1;
        if (write && put(j, out, cap, n, t == JSON_OBJECT ? "{" : "[", 1) < 0) return -1;
        int r, count = 0;
        while ((r = json_next(j, close)) > 0) {
            if (write && count > 0 && put(j, out, cap, n, ", ", 2) < 0) return -1;
            if (t == JSON_OBJECT) {
                if (json_peek(j) != JSON_STRING) {
                    char b[16];
                    return json_fail(j, j->pos, "expected a key (string), found %s", what_is(j, j->pos, b, sizeof b));
                }
                if (dump_value(j, out, cap, n, write) < 0) return -1;
                skip_ws(j);
                if (j->pos >= j->len || j->src[j->pos] != ':') {
                    char b[16];
                    return json_fail(j, j->pos, "expected ':' after key, found %s", what_is(j, j->pos, b, sizeof b));
                }
                j->pos++;
                if (write && put(j, out, cap, n, ": ", 2) < 0) return -1;
            }
            if (dump_value(j, out, cap, n, write) < 0) return -1;
            count++;
        }
        if (r < 0) return -1;
        if (write && put(j, out, cap, n, &close, 1) < 0) return -1;
        return 0;
    }
    case JSON_STRING: {
        /* decode each character, then escape it again the canonical way */
        j->pos++;
        if (write && put(j, out, cap, n, "\"", 1) < 0) return -1;
        int r;
        char b[4];
        size_t k;
        while ((r = read_char(j, b, &k)) > 0) {
            if (!write) continue;
            char esc[8];
            size_t e = json_escape(b, k, esc, sizeof esc);
            if (put(j, out, cap, n, esc + 1, e - 2) < 0) return -1; /* without the quotes */
        }
        if (r < 0) return -1;
        return write ? put(j, out, cap, n, "\"", 1) : 0;
    }
    case JSON_NUMBER: {
        const char *text;
        size_t tl;
        if (json_number(j, &text, &tl, NULL) < 0) return -1;
        return write ? put(j, out, cap, n, text, tl) : 0;
    }
    case JSON_TRUE:
    case JSON_FALSE:
    case JSON_NULL: {
        size_t start = j->pos;
        if (json_literal(j, NULL) < 0) return -1;
        return write ? put(j, out, cap, n, j->src + start, j->pos - start) : 0;
    }
    default: {
        char b[16];
        return json_fail(j, j->pos, "expected a value, found %s", what_is(j, j->pos, b, sizeof b));
    }
    }
}

int json_skip(Json *j)
{
    size_t n = 0;
    return dump_value(j, NULL, 0, &n, 0);
}

int json_dump(Json *j, char *out, size_t cap, size_t *out_len)
{
    size_t n = 0;
    if (dump_value(j, out, out ? cap : (size_t)-1, &n, 1) < 0) return -1;
    if (out_len) *out_len = n;
    return 0;
}

int json_end(Json *j)
{
    if (j->failed) return -1;
    skip_ws(j);
    if (j->pos < j->len) {
        char b[16];
        return json_fail(j, j->pos, "trailing %s after the JSON value", what_is(j, j->pos, b, sizeof b));
    }
    return 0;
}

static size_t escape(const char *s, size_t n, char *out, size_t cap, int valid);

size_t json_escape(const char *s, size_t n, char *out, size_t cap)
{
    return escape(s, n, out, cap, 0);
}

size_t json_escape_valid(const char *s, size_t n, char *out, size_t cap)
{
    return escape(s, n, out, cap, 1);
}

static size_t escape(const char *s, size_t n, char *out, size_t cap, int valid)
{
    static const char hex[] = "0123456789abcdef", named[] = "\"\\\b\f\n\r\t", letter[] = "\"\\bfnrt";
    size_t len = 0;
    if (cap) out[0] = '"';
    len++;
    for (size_t i = 0; i < n; i++) {
        /* what byte i becomes: seq[0, k), or k bytes from `from` */
        unsigned char c = (unsigned char)s[i];
        char seq[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        const char *from = seq, *e = c ? memchr(named, c, sizeof named - 1) : NULL;
        int k = 6;
        if (e) seq[1] = letter[e - named], k = 2;
        else if (valid && c >= 0x80) {
            /* a whole character, or U+FFFD for a malformed byte */
            unsigned cp;
            k = json_utf8_decode((const unsigned char *)s + i, n - i, &cp);
            from = k ? s + i : "\xef\xbf\xbd";
            i += k ? (size_t)k - 1 : 0;
            k = k ? k : 3;
        } else if (c >= 0x20)
            from = s + i, k = 1;
        for (int b = 0; b < k; b++, len++)
            if (len < cap) out[len] = from[b];
    }
    if (len < cap) out[len] = '"';
    len++;
    if (len < cap) out[len] = '\0';
    return len;
}

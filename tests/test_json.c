/* test_json.c - the strict JSON reader on good and hostile inputs, the
 * Python-style re-serializer (tojson) and the string writer. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../src/text/json.h"

/* Validates a whole text: one value, then nothing. */
static int validate(const char *s, size_t n, char *err, size_t cap)
{
    Json j;
    json_init(&j, s, n, "t.json");
    int r = json_skip(&j);
    if (r == 0) r = json_end(&j);
    if (r < 0 && err) snprintf(err, cap, "%s", j.err);
    return r;
}

static void good(const char *s, const char *what)
{
    char err[400] = "";
    CHECK(validate(s, strlen(s), err, sizeof err) == 0, "accepts %s (%s)", what, err);
}

/* Refused, with "t.json: byte AT: ..." containing want. */
static void bad_n(const char *s, size_t n, long at, const char *want, const char *what)
{
    char err[400] = "", prefix[64];
    int r = validate(s, n, err, sizeof err);
    snprintf(prefix, sizeof prefix, "t.json: byte %ld: ", at);
    CHECK(r < 0 && strncmp(err, prefix, strlen(prefix)) == 0 && strstr(err, want) != NULL, "refuses %s: \"%s\"", what, err);
}

static void bad(const char *s, long at, const char *want, const char *what)
{
    bad_n(s, strlen(s), at, want, what);
}

static void test_validation(void)
{
    good("[]", "empty array");
    good(" {\"a\" : [1, -0.5e+3, 0, 1E9, true, false, null, \"\"]}\n", "mixed values with whitespace");
    good("\"\\u00e9\\ud83d\\ude00 \\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "all escapes");
    good("\"\xe4\xbd\xa0\xf0\x9f\x98\x80\x7f\"", "raw UTF-8 and DEL");
    good("-0", "negative zero");

    bad("", 0, "expected a value", "empty text");
    bad("[1,]", 3, "trailing comma", "trailing comma in array");
    bad("{\"a\":1,}", 7, "trailing comma", "trailing comma in object");
    bad("[1 2]", 3, "expected ','", "missing comma");
    bad("{\"a\" 1}", 5, "expected ':'", "missing colon");
    bad("{1:2}", 1, "key", "non-string key");
    bad("[1] [2]", 4, "trailing", "two values");
    bad("[\"abc", 5, "unterminated string", "unterminated string");
    bad("[", 1, "end of text", "unclosed array");
    bad("\"a\nb\"", 2, "control character", "raw newline in string");
    bad("\"\\x\"", 1, "bad escape", "bad escape \\x");
    bad("\"\\u12\"", 5, "hex digit", "short \\u escape");
    bad("\"\\u12g4\"", 5, "hex digit", "bad hex digit");
    bad("\"\\ud800\"", 1, "not followed by a low", "lone high surrogate");
    bad("\"\\ud800\\u0041\"", 7, "followed by", "high surrogate + non-surrogate");
    bad("\"\\udc00\"", 1, "lone low surrogate", "lone low surrogate");
    bad("\"\xc0\x80\"", 1, "invalid UTF-8", "overlong NUL");
    bad("\"\xe0\x80\xaf\"", 1, "invalid UTF-8", "overlong '/'");
    bad("\"\xed\xa0\x80\"", 1, "invalid UTF-8", "UTF-8 encoded surrogate");
    bad("\"\xf4\x90\x80\x80\"", 1, "invalid UTF-8", "code point above U+10FFFF");
    bad("\"\xe4\xbd\"", 1, "invalid UTF-8", "truncated sequence");
    bad("\"\x80\"", 1, "invalid UTF-8", "lone continuation byte");
    bad("\"\xff\"", 1, "invalid UTF-8", "byte 0xff");
    bad("01", 1, "leading zero", "leading zero");
    bad("1.", 2, "after '.'", "bare decimal point");
    bad("-", 1, "digit", "lone minus");
    bad("1e", 2, "exponent", "empty exponent");
    bad("+1", 0, "expected a value", "leading plus");
    bad(".5", 0, "expected a value", "leading dot");
    bad("NaN", 0, "expected a value", "NaN");
    bad("[Infinity]", 1, "expected a value", "Infinity");
    bad("tru", 0, "invalid literal", "truncated true");
    bad("nul", 0, "invalid literal", "truncated null");
    bad("[1]\xef\xbb\xbf", 3, "trailing", "BOM after the value");
    bad("// c\n[]", 0, "expected a value", "comment");
    bad_n("[\"a\0b\"]", 7, 3, "control character", "NUL byte in string");
}

static void test_depth(void)
{
    char deep[2 * JSON_MAX_DEPTH + 8];
    for (int d = JSON_MAX_DEPTH; d <= JSON_MAX_DEPTH + 1; d++) {
        size_t n = 0;
        for (int i = 0; i < d; i++) deep[n++] = '[';
        for (int i = 0; i < d; i++) deep[n++] = ']';
        char err[400] = "";
        int r = validate(deep, n, err, sizeof err);
        if (d == JSON_MAX_DEPTH) CHECK(r == 0, "nesting %d accepted (%s)", d, err);
        else CHECK(r < 0 && strstr(err, "nested deeper") && strstr(err, "byte 64:"), "nesting %d refused: %s", d, err);
    }
    /* a huge depth is refused quickly, without recursion trouble */
    size_t big = 100000;
    char *b = malloc(big);
    memset(b, '[', big);
    char err[400];
    CHECK(validate(b, big, err, sizeof err) < 0 && strstr(err, "nested deeper"), "100000 '[' refused");
    memset(b, '{', big);
    CHECK(validate(b, big, err, sizeof err) < 0, "100000 '{' refused");
    free(b);
}

static void test_strings(void)
{
    const char *s = "\"a\\u00e9\\ud83d\\ude00\\n\\\"\\/\"";
    Json j;
    json_init(&j, s, strlen(s), "t");
    char out[32];
    size_t n;
    CHECK(json_string(&j, out, sizeof out, &n) == 0 && n == 1 + 2 + 4 + 1 + 1 + 1 &&
              memcmp(out, "a\xc3\xa9\xf0\x9f\x98\x80\n\"/", n) == 0,
          "string decoding: \\u, surrogate pair, simple escapes");
    json_init(&j, s, strlen(s), "t");
    CHECK(json_string(&j, NULL, (size_t)-1, &n) == 0 && n == 10, "string measuring with a NULL buffer");
    json_init(&j, s, strlen(s), "t");
    CHECK(json_string(&j, out, 5, &n) < 0 && strstr(j.err, "longer than its buffer"), "string longer than the buffer refused");
    /* after a failure every call fails */
    CHECK(json_peek(&j) == JSON_NONE && json_skip(&j) < 0 && json_end(&j) < 0, "errors are sticky");

    const char *num = "-12.5e1";
    json_init(&j, num, strlen(num), "t");
    const char *text;
    size_t tl;
    double v;
    CHECK(json_number(&j, &text, &tl, &v) == 0 && tl == 7 && v == -125.0, "number value and text");
}

static void test_object_walk(void)
{
    const char *s = "{\"role\": \"user\", \"n\": [1, {\"x\": null}], \"content\": \"hi\"}";
    Json j;
    json_init(&j, s, strlen(s), "t");
    int r, keys = 0, ok = 1;
    char key[16], val[16];
    size_t kl, vl;
    ok &= json_enter(&j, '{') == 0;
    while ((r = json_next(&j, '}')) > 0) {
        ok &= json_key(&j, key, sizeof key, &kl) == 0;
        keys++;
        if (json_peek(&j) == JSON_STRING) ok &= json_string(&j, val, sizeof val, &vl) == 0;
        else ok &= json_skip(&j) == 0;
    }
    CHECK(ok && r == 0 && keys == 3 && vl == 2 && memcmp(val, "hi", 2) == 0 && json_end(&j) == 0, "walk an object by keys");
}

static void test_dump(void)
{
    const char *s = "{\"a\":1,\"b\" : [true,false,null, -2.50e3],\"c\":{\"d\":\"x\\u00e9\\ud83d\\ude00\\/\\u0001\\u001F\"},\"e\":{},\"f\":[]}";
    const char *want = "{\"a\": 1, \"b\": [true, false, null, -2.50e3], \"c\": {\"d\": \"x\xc3\xa9\xf0\x9f\x98\x80/\\u0001\\u001f\"}, "
                       "\"e\": {}, \"f\": []}";
    Json j;
    json_init(&j, s, strlen(s), "t");
    char out[256];
    size_t n;
    int r = json_dump(&j, out, sizeof out, &n);
    CHECK(r == 0 && n == strlen(want) && memcmp(out, want, n) == 0, "tojson re-serialization (Python json.dumps style)");
    json_init(&j, s, strlen(s), "t");
    size_t m;
    CHECK(json_dump(&j, NULL, 0, &m) == 0 && m == n, "tojson measuring");
    json_init(&j, s, strlen(s), "t");
    CHECK(json_dump(&j, out, 20, &m) < 0, "tojson into a short buffer fails");
}

static void test_escape(void)
{
    char out[64];
    size_t n = json_escape("a\"\\\b\f\n\r\t\x01\x1f\x7f\xc3\xa9/", 14, out, sizeof out);
    const char *want = "\"a\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\xc3\xa9/\"";
    CHECK(n == strlen(want) && strcmp(out, want) == 0, "escape: quotes, backslash, controls, UTF-8 kept");
    char small[4];
    CHECK(json_escape("abcdef", 6, small, sizeof small) == 8 && memcmp(small, "\"abc", 4) == 0,
          "escape: truncated into a short buffer, full length returned");
    CHECK(json_escape("", 0, out, sizeof out) == 2 && strcmp(out, "\"\"") == 0, "escape: empty string");
    n = json_escape_valid("a\xe4\xbd\xa0\xe4\xbd\n\xff", 8, out, sizeof out);
    want = "\"a\xe4\xbd\xa0\xef\xbf\xbd\xef\xbf\xbd\\n\xef\xbf\xbd\"";
    CHECK(n == strlen(want) && strcmp(out, want) == 0, "escape_valid: a malformed byte each is U+FFFD, valid UTF-8 kept");
    /* round trip: escape then decode gives the bytes back */
    const char raw[] = "x\x01\n\"\\\xe2\x82\xac";
    n = json_escape(raw, sizeof raw - 1, out, sizeof out);
    Json j;
    json_init(&j, out, n, "t");
    char back[32];
    size_t bl;
    CHECK(json_string(&j, back, sizeof back, &bl) == 0 && bl == sizeof raw - 1 && memcmp(back, raw, bl) == 0,
          "escape then decode round-trips");
}

/* Mutated documents: each either parses or fails with a message; ASan
 * watches for anything out of bounds. Fixed seed, bounded loop. */
static void test_mutations(void)
{
    const char *base = "[{\"role\": \"assistant\", \"content\": \"a\\u00e9\\ud83d\\ude00\", \"tool_calls\": "
                       "[{\"function\": {\"name\": \"f\", \"arguments\": {\"x\": [1, 2.5e3, true, null]}}}]}]";
    size_t n = strlen(base);
    char *buf = malloc(n);
    uint32_t x = 12345;
    int ok = 1, failed = 0;
    for (int iter = 0; iter < 5000; iter++) {
        memcpy(buf, base, n);
        int edits = 1 + iter % 4;
        for (int e = 0; e < edits; e++) {
            x = x * 1664525u + 1013904223u;
            size_t at = (x >> 8) % n;
            x = x * 1664525u + 1013904223u;
            buf[at] = (char)(x >> 24);
        }
        x = x * 1664525u + 1013904223u;
        size_t len = (x >> 8) % (n + 1); /* also truncations */
        char err[400] = "";
        int r = validate(buf, len, err, sizeof err);
        if (r < 0) {
            failed++;
            if (strncmp(err, "t.json: byte ", 13) != 0) ok = 0;
        }
        Json j;
        json_init(&j, buf, len, "t.json");
        char out[512];
        size_t m;
        json_dump(&j, out, sizeof out, &m);
    }
    free(buf);
    CHECK(ok && failed > 4000, "5000 mutated documents: no crash, every failure has a message (%d refused)", failed);
}

/* text_to_double against the C library's strtod (correctly rounded):
 * chosen edge cases, random doubles printed with 15-17 digits, exact and
 * near halfway points between neighbouring doubles (normal and subnormal,
 * up to 1000 digits), long digit strings, the fast path's range. */
static int same_as_strtod(const char *t)
{
    double a = 12345, b;
    char *end;
    size_t n = text_to_double(t, strlen(t), &a);
    b = strtod(t, &end);
    return n == (size_t)(end - t) && (n == 0 || memcmp(&a, &b, sizeof a) == 0);
}

static void test_decimal(void)
{
    static const char *edge[] = {"0", "-0", "1", "0.1", "0.7", "-3.14159", "1e308", "1.7976931348623157e308",
        "1.7976931348623158e308", "1.7976931348623159e308", "2e308", "4.9406564584124654e-324", "2.4703282292062327e-324",
        "2.4703282292062328e-324", "2.2250738585072011e-308", "2.2250738585072014e-308", "1e-400", "1e400", "0e99999999",
        "9007199254740993", "9007199254740992.5", "9007199254740993.0000000000000000000000000000001", ".5", "5.", ".", "-",
        "+", "e5", "1e", "1e+", "1.5e-3x", " 12", "\t-3.5", "1e22", "1e23", "8.5e-323", "00012.50000", "-.0e-0",
        "0.000000000000000000000000000000000000000000000000001", "123456789012345678901234567890",
        "100000000000000000000000000000000000000e-20", "1.5G", "300M", NULL};
    int bad = 0;
    for (int i = 0; edge[i]; i++)
        if (!same_as_strtod(edge[i])) bad++, fprintf(stderr, "text_to_double differs from strtod: '%s'\n", edge[i]);
    CHECK(bad == 0, "text_to_double: %d edge cases as strtod reads them", (int)(sizeof edge / sizeof edge[0]) - 1);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    char buf[1100];
    bad = 0;
    int n = 0;
    for (int it = 0; it < 60000; it++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        char *p = buf;
        if (x >> 62 == 0) *p++ = '-';
        uint64_t bits = x & 0x7fefffffffffffffull;
        if (it % 5 >= 3) bits %= 0x0010000000000000ull; /* subnormal */
        double d;
        memcpy(&d, &bits, sizeof d);
        long double mid = ((long double)d + nextafter(d, INFINITY)) / 2; /* exact in x87's 64-bit mantissa */
        switch (it % 5) {
        case 0: sprintf(p, "%.*g", 15 + (int)((x >> 30) % 3), d); break;
        case 1: sprintf(p, "%.*Le", 16 + (int)((x >> 30) % 30), mid); break; /* near halfway */
        case 2: { /* many digits, any exponent */
            int nd = 1 + (int)((x >> 20) % 40);
            for (int i = 0; i < nd; i++) *p++ = (char)('0' + (x >> (i % 60)) % 10);
            sprintf(p, ".%ue%d", (unsigned)(x >> 33) % 100000, (int)((x >> 40) % 700) - 350);
            break;
        }
        case 3: sprintf(p, "%.1000Le", mid); break; /* exactly halfway */
        default: { /* halfway and a nonzero digit far after it */
            sprintf(p, "%.1000Le", mid);
            char *e = strchr(buf, 'e'), *at = p + 2 + (int)((x >> 24) % 990);
            if (at < e && *at == '0') *at = '1';
        }
        }
        n++;
        if (!same_as_strtod(buf) && bad++ < 5) fprintf(stderr, "text_to_double differs from strtod: '%.80s...'\n", buf);
    }
    CHECK(bad == 0, "text_to_double: %d random numbers, halfway points and long digit strings as strtod reads them (%d differ)", n, bad);
}

int main(void)
{
    test_validation();
    test_depth();
    test_strings();
    test_object_walk();
    test_dump();
    test_escape();
    test_mutations();
    test_decimal();
    CHECK_DONE();
}

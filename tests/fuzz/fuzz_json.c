/* fuzz_json - the strict JSON reader on arbitrary bytes: json_skip of the
 * whole text, json_dump (measure, then write), and a walk that reads every
 * key, string, number and literal. Properties: the reader agrees with
 * itself (skip accepts exactly what dump accepts); a dumped text is valid
 * JSON that dumps to itself; json_escape output is a JSON string that
 * decodes back to the input bytes when they are valid UTF-8. */
#include "../../src/text/json.h"

#include "fuzz_common.h"

static int walk(Json *j)
{
    JsonType t = json_peek(j);
    size_t n;
    switch (t) {
    case JSON_OBJECT: {
        if (json_enter(j, '{') < 0) return -1;
        int r;
        while ((r = json_next(j, '}')) > 0) {
            if (json_key(j, NULL, SIZE_MAX, &n) < 0) return -1;
            if (walk(j) < 0) return -1;
        }
        return r;
    }
    case JSON_ARRAY: {
        if (json_enter(j, '[') < 0) return -1;
        int r;
        while ((r = json_next(j, ']')) > 0)
            if (walk(j) < 0) return -1;
        return r;
    }
    case JSON_STRING:
        return json_string(j, NULL, SIZE_MAX, &n);
    case JSON_NUMBER: {
        /* The value is not asked for: json_number refuses to convert
         * numbers longer than 63 characters, which skipping accepts. */
        const char *text;
        return json_number(j, &text, &n, NULL);
    }
    default: {
        JsonType lit;
        return json_literal(j, &lit);
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *src = (const char *)data;
    Json j;
    json_init(&j, src, size, "fuzz.json");
    int skip_ok = json_skip(&j) == 0 && json_end(&j) == 0;
    if (!skip_ok) FUZZ_ASSERT(strchr(j.err, '\n') == NULL && j.err[0], "one-line error");

    json_init(&j, src, size, "fuzz.json");
    int walk_ok = walk(&j) == 0 && json_end(&j) == 0;
    FUZZ_ASSERT(walk_ok == skip_ok, "walking accepts what skipping accepts");

    size_t len = 0;
    json_init(&j, src, size, "fuzz.json");
    int dump_ok = json_dump(&j, NULL, 0, &len) == 0 && json_end(&j) == 0;
    FUZZ_ASSERT(dump_ok == skip_ok, "dumping accepts what skipping accepts");
    if (dump_ok) {
        char *a = malloc(len + 1), *b = malloc(len + 1);
        size_t la = 0, lb = 0;
        json_init(&j, src, size, "fuzz.json");
        FUZZ_ASSERT(json_dump(&j, a, len + 1, &la) == 0 && la == len, "dump writes what it measured");
        Json k;
        json_init(&k, a, la, "dump");
        FUZZ_ASSERT(json_dump(&k, b, len + 1, &lb) == 0 && json_end(&k) == 0, "a dump is valid JSON");
        FUZZ_ASSERT(lb == la && memcmp(a, b, la) == 0, "a dump dumps to itself");
        free(a);
        free(b);
    }

    /* json_escape: a quoted string that reads back as the same bytes. */
    size_t cap = size * 6 + 3;
    char *esc = malloc(cap), *back = malloc(size + 1);
    size_t el = json_escape(src, size, esc, cap);
    FUZZ_ASSERT(el < cap, "escape fits 6 bytes per byte");
    Json e;
    json_init(&e, esc, el, "escaped");
    size_t bl = 0;
    int valid = 1;
    unsigned cp;
    for (size_t i = 0; i < size;) {
        int n = json_utf8_decode(data + i, size - i, &cp);
        if (n == 0) { valid = 0; break; }
        i += (size_t)n;
    }
    if (valid) {
        FUZZ_ASSERT(json_string(&e, back, size + 1, &bl) == 0 && json_end(&e) == 0, "escaped valid UTF-8 reads back");
        FUZZ_ASSERT(bl == size && memcmp(back, src, size) == 0, "escaped text decodes to the input");
    }
    free(esc);
    free(back);
    return 0;
}

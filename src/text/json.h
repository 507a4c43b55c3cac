/* json.h - a small, strict, bounded JSON reader (a pull cursor over the
 * text) and a JSON string writer. Nothing is allocated: strings are decoded
 * into caller buffers (or only measured when the buffer is NULL).
 *
 * Strict means RFC 8259 and nothing more: no comments, no trailing commas,
 * no NaN/Infinity, no control characters inside strings, valid UTF-8 only
 * (no overlong forms, no encoded surrogates, nothing above U+10FFFF),
 * \uXXXX escapes with surrogate pairs joined and lone surrogates refused,
 * nesting at most JSON_MAX_DEPTH deep, nothing after the top value.
 *
 * Errors: the first failure is recorded as "NAME: byte N: what" in
 * Json.err (N = 0-based byte offset); every later call returns -1 at once.
 *
 * Reading an object:
 *     if (json_enter(j, '{') < 0) ...
 *     while ((r = json_next(j, '}')) > 0) {
 *         json_key(j, key, sizeof key, &n);   (then the value: json_string, json_skip, ...)
 *     }
 *     r < 0: error; r == 0: the '}' was consumed. */
#ifndef PITH_JSON_H
#define PITH_JSON_H

#include <stddef.h>

#include "../base/status.h"

#define JSON_MAX_DEPTH 64

typedef enum {
    JSON_NONE = 0, /* end of text or a character that starts no value */
    JSON_OBJECT,
    JSON_ARRAY,
    JSON_STRING,
    JSON_NUMBER,
    JSON_TRUE,
    JSON_FALSE,
    JSON_NULL
} JsonType;

typedef struct {
    const char *src;
    size_t len;
    size_t pos;
    int depth;
    int failed;
    PithStatus status;             /* of the first error: PITH_NO_MEMORY when a value is longer than its buffer */
    int first[JSON_MAX_DEPTH + 1]; /* per open container: no element read yet */
    const char *name;              /* file name used in error messages */
    char err[320];
} Json;

void json_init(Json *j, const char *src, size_t len, const char *name);
/* Records an error at byte `pos` (only the first error is kept). Returns -1. */
int json_fail(Json *j, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Type of the next value, after skipping whitespace (does not consume). */
JsonType json_peek(Json *j);
const char *json_type_name(JsonType t);
/* Consumes '{' or '[' (open) and enters the container. */
int json_enter(Json *j, char open);
/* Before each element of the current container: returns 1 if an element
 * follows (its separating comma consumed), 0 once the closing character
 * (close = '}' or ']') has been consumed, -1 on error. */
int json_next(Json *j, char close);
/* Reads an object key and its ':' (decoded like json_string). */
int json_key(Json *j, char *out, size_t cap, size_t *out_len);
/* Reads a string value, decoding escapes to UTF-8. With out == NULL the
 * string is only validated and its decoded length stored. Fails if the
 * decoded string does not fit in cap bytes (no NUL is added). */
int json_string(Json *j, char *out, size_t cap, size_t *out_len);
/* Reads a number; stores its text span (verbatim) and value. */
int json_number(Json *j, const char **text, size_t *text_len, double *value);
/* The decimal number at the start of s[0..len) ([-+]digits[.digits][e[-+]digits],
 * white space before it skipped; digits on one side of the point may be
 * missing) as the nearest double, ties to even (strtod's result, without
 * hexadecimal, inf or nan); beyond the double's range ±HUGE_VAL or ±0.
 * Returns the characters read, 0 (value untouched) if there is no number. */
size_t text_to_double(const char *s, size_t len, double *value);
/* Reads true, false or null and stores which. */
int json_literal(Json *j, JsonType *type);
/* Skips one value of any type, validating it fully. */
int json_skip(Json *j);
/* Reads one value of any type and writes it re-serialized the way Python's
 * json.dumps(ensure_ascii=False) does: ", " and ": " separators, keys in
 * their order, strings escaped as by json_escape, numbers verbatim. out may
 * be NULL to measure. Fails if the text does not fit in cap. */
int json_dump(Json *j, char *out, size_t cap, size_t *out_len);
/* After the top value: succeeds only if nothing but whitespace follows. */
int json_end(Json *j);

/* Writes s[0..n) as a JSON string literal with quotes: '"' and '\\'
 * escaped, \b \f \n \r \t, other bytes below 0x20 as \u00XX (lowercase
 * hex); all other bytes (UTF-8) copied. Writes at most cap bytes and a NUL
 * if there is room; returns the full length (without NUL), like snprintf. */
size_t json_escape(const char *s, size_t n, char *out, size_t cap);
/* The same, with each byte that is not part of valid UTF-8 written as
 * U+FFFD: always valid JSON text (a token's piece may end mid-character). */
size_t json_escape_valid(const char *s, size_t n, char *out, size_t cap);

/* Validates one UTF-8 sequence at s[0..n): returns its length (1..4) and
 * the code point, or 0 if it is malformed. */
int json_utf8_decode(const unsigned char *s, size_t n, unsigned *cp);

#endif

/* http.h - the HTTP/1.1 request head, parsed strictly and within bounds,
 * for `pith serve`. Nothing is copied or allocated: the fields point into
 * the caller's buffer.
 *
 * What is accepted: "METHOD SP TARGET SP HTTP/1.x" and header lines, each
 * ended by CRLF (a bare LF is taken too), an empty line at the end.
 * Header names are tokens, values hold no control bytes but tab. A body
 * is announced with one Content-Length (digits only); Transfer-Encoding in
 * a request is refused (501), so a body's length is always known before
 * it is read. */
#ifndef PITH_HTTP_H
#define PITH_HTTP_H

#include <stddef.h>
#include <stdint.h>

enum { HTTP_GET = 1, HTTP_POST, HTTP_HEAD, HTTP_OPTIONS, HTTP_OTHER };

#define HTTP_MAX_HEADERS 100

typedef struct {
    int method;                 /* HTTP_* */
    const char *path;           /* target without the query string */
    size_t path_len;
    const char *query;          /* what follows the '?' (NULL: none), up to the target's end */
    size_t query_len;
    int64_t content_length;     /* -1 when absent */
    int expect_continue;        /* "Expect: 100-continue" */
    int content_json;           /* Content-Type is application/json (parameters allowed) */
    const char *auth;           /* Authorization value, or NULL */
    size_t auth_len;
    const char *host;           /* Host value, or NULL */
    size_t host_len;
    size_t head_len;            /* bytes of the head, the empty line included */
    int status;                 /* on error: the status to answer (400, 431, 501, 505) */
    const char *why;            /* on error: what is wrong (static text) */
} HttpRequest;

/* Parses the head at the start of buf[0..len). Returns 1 when it is
 * complete (r filled), 0 when more bytes are needed (and the head is still
 * shorter than max_head), -1 on an error (r->status, r->why). */
int http_parse_head(const char *buf, size_t len, size_t max_head, HttpRequest *r);

/* "OK", "Not Found", ... for the statuses pith answers. */
const char *http_status_text(int status);

/* 1 if the Authorization value is "Bearer KEY" (scheme case-insensitive)
 * with exactly key[0..key_len). The time taken depends on the lengths,
 * never on where the bytes differ. */
int http_bearer_matches(const char *auth, size_t auth_len, const char *key, size_t key_len);

/* 1 if a Host header value names the loopback interface: localhost,
 * 127.0.0.1 or [::1], with or without a port. */
int http_host_is_loopback(const char *host, size_t len);

/* 1 if path[0..len) equals the NUL-terminated s. */
int http_path_is(const char *path, size_t len, const char *s);

/* The value of name in a query string ("a=1&action=save"), taken as it
 * is (no %-decoding), into *value; 1 if present, else 0. */
int http_query_value(const char *query, size_t len, const char *name, const char **value, size_t *value_len);

#endif

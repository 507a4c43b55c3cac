/* HTTP/1.1 request heads: strict, bounded, copying nothing. */
#include "http.h"

#include <string.h>

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* Case-insensitive comparison of s[0..n) with the lowercase word w. */
static int word_is(const char *s, size_t n, const char *w)
{
    size_t k = strlen(w);
    if (n != k) return 0;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)s[i]) != w[i]) return 0;
    return 1;
}

/* RFC 9110 token characters (header names, methods). */
static int is_tchar(int c)
{
    if (c >= '0' && c <= '9') return 1;
    if ((c | 32) >= 'a' && (c | 32) <= 'z') return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int fail(HttpRequest *r, int status, const char *why)
{
    r->status = status;
    r->why = why;
    return -1;
}

/* End of the line starting at p (index of its '\n'), or -1 if not in buf. */
static long line_end(const char *buf, size_t len, size_t p)
{
    const char *nl = memchr(buf + p, '\n', len - p);
    return nl ? (long)(nl - buf) : -1;
}

static int parse_content_length(const char *v, size_t n, int64_t *out)
{
    if (n == 0 || n > 15) return -1; /* 15 digits: far beyond any body we take, no overflow */
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') return -1;
        x = x * 10 + (v[i] - '0');
    }
    *out = x;
    return 0;
}

int http_parse_head(const char *buf, size_t len, size_t max_head, HttpRequest *r)
{
    memset(r, 0, sizeof *r);
    r->content_length = -1;
    size_t scan = len < max_head ? len : max_head;
    /* Find the empty line first: nothing is parsed from a partial head. */
    size_t end = 0;
    int found = 0;
    for (size_t p = 0; p < scan;) {
        long e = line_end(buf, scan, p);
        if (e < 0) break;
        size_t body = (size_t)e - p; /* bytes of the line before '\n' */
        if (body == 0 || (body == 1 && buf[p] == '\r')) {
            if (p == 0) return fail(r, 400, "the request starts with an empty line");
            end = (size_t)e + 1;
            found = 1;
            break;
        }
        p = (size_t)e + 1;
    }
    if (!found) {
        if (len >= max_head) return fail(r, 431, "the request head is too long");
        /* Bytes that cannot start a request line end it early. */
        for (size_t i = 0; i < scan; i++) {
            unsigned char c = (unsigned char)buf[i];
            if (c == 0 || c >= 0x80) return fail(r, 400, "the request head holds a byte that is not text");
        }
        return 0;
    }
    r->head_len = end;

    /* Request line. */
    size_t p = 0;
    long e = line_end(buf, end, 0);
    size_t le = (size_t)e;
    if (le > 0 && buf[le - 1] == '\r') le--;
    size_t m = 0;
    while (m < le && is_tchar((unsigned char)buf[m])) m++;
    if (m == 0 || m >= le || buf[m] != ' ') return fail(r, 400, "malformed request line");
    if (m == 3 && !memcmp(buf, "GET", 3)) r->method = HTTP_GET;
    else if (m == 4 && !memcmp(buf, "POST", 4)) r->method = HTTP_POST;
    else if (m == 4 && !memcmp(buf, "HEAD", 4)) r->method = HTTP_HEAD;
    else if (m == 7 && !memcmp(buf, "OPTIONS", 7)) r->method = HTTP_OPTIONS;
    else r->method = HTTP_OTHER;
    size_t t = m + 1, t_end = t;
    while (t_end < le && buf[t_end] != ' ') {
        unsigned char c = (unsigned char)buf[t_end];
        if (c <= 0x20 || c >= 0x7f) return fail(r, 400, "the request target holds a byte that is not allowed");
        t_end++;
    }
    if (t_end == t || t_end >= le) return fail(r, 400, "malformed request line");
    if (buf[t] != '/') return fail(r, 400, "the request target must be a path starting with /");
    r->path = buf + t;
    const char *q = memchr(buf + t, '?', t_end - t);
    r->path_len = q ? (size_t)(q - (buf + t)) : t_end - t;
    r->query = q ? q + 1 : NULL;
    r->query_len = q ? (size_t)(buf + t_end - (q + 1)) : 0;
    const char *ver = buf + t_end + 1;
    size_t ver_len = le - (t_end + 1);
    if (ver_len != 8 || memcmp(ver, "HTTP/1.", 7) != 0 || (ver[7] != '0' && ver[7] != '1'))
        return fail(r, 505, "only HTTP/1.0 and HTTP/1.1 are served");

    /* Header lines. */
    int n_headers = 0;
    for (p = (size_t)e + 1; p < end;) {
        e = line_end(buf, end, p);
        le = (size_t)e;
        if (le > p && buf[le - 1] == '\r') le--;
        if (le == p) break; /* the empty line */
        if (++n_headers > HTTP_MAX_HEADERS) return fail(r, 431, "too many header lines");
        size_t n = p;
        while (n < le && is_tchar((unsigned char)buf[n])) n++;
        if (n == p || n >= le || buf[n] != ':') return fail(r, 400, "malformed header line");
        const char *name = buf + p;
        size_t name_len = n - p;
        size_t v = n + 1;
        while (v < le && (buf[v] == ' ' || buf[v] == '\t')) v++;
        size_t v_end = le;
        while (v_end > v && (buf[v_end - 1] == ' ' || buf[v_end - 1] == '\t')) v_end--;
        for (size_t i = v; i < v_end; i++) {
            unsigned char c = (unsigned char)buf[i];
            if ((c < 0x20 && c != '\t') || c == 0x7f) return fail(r, 400, "a header value holds a control byte");
        }
        const char *val = buf + v;
        size_t val_len = v_end - v;
        if (word_is(name, name_len, "content-length")) {
            int64_t cl;
            if (parse_content_length(val, val_len, &cl) != 0) return fail(r, 400, "Content-Length is not a number");
            if (r->content_length >= 0 && r->content_length != cl) return fail(r, 400, "conflicting Content-Length headers");
            r->content_length = cl;
        } else if (word_is(name, name_len, "transfer-encoding")) {
            return fail(r, 501, "Transfer-Encoding in requests is not supported: send Content-Length");
        } else if (word_is(name, name_len, "expect")) {
            if (!word_is(val, val_len, "100-continue")) return fail(r, 417, "only Expect: 100-continue is understood");
            r->expect_continue = 1;
        } else if (word_is(name, name_len, "content-type")) {
            size_t k = 0;
            while (k < val_len && val[k] != ';' && val[k] != ' ') k++;
            r->content_json = word_is(val, k, "application/json");
        } else if (word_is(name, name_len, "authorization")) {
            if (r->auth) return fail(r, 400, "more than one Authorization header");
            r->auth = val;
            r->auth_len = val_len;
        } else if (word_is(name, name_len, "host")) {
            if (r->host) return fail(r, 400, "more than one Host header");
            r->host = val;
            r->host_len = val_len;
        }
        p = (size_t)e + 1;
    }
    return 1;
}

const char *http_status_text(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

int http_bearer_matches(const char *auth, size_t auth_len, const char *key, size_t key_len)
{
    if (!auth || auth_len < 7 || !word_is(auth, 6, "bearer") || auth[6] != ' ') return 0;
    const char *given = auth + 7;
    size_t given_len = auth_len - 7;
    while (given_len && *given == ' ') given++, given_len--;
    /* Every byte of the key is compared whatever the given text is: the
     * time depends only on key_len. */
    unsigned diff = given_len != key_len;
    for (size_t i = 0; i < key_len; i++) {
        unsigned char g = i < given_len ? (unsigned char)given[i] : 0;
        diff |= (unsigned)(g ^ (unsigned char)key[i]);
    }
    return diff == 0;
}

int http_host_is_loopback(const char *host, size_t len)
{
    if (!host) return 0;
    size_t n = len;
    if (n && host[0] == '[') {
        const char *close = memchr(host, ']', n);
        if (!close) return 0;
        size_t k = (size_t)(close - host) + 1;
        if (k < n && host[k] != ':') return 0;
        return k == 5 && !memcmp(host, "[::1]", 5);
    }
    const char *colon = memchr(host, ':', n);
    if (colon) n = (size_t)(colon - host);
    return word_is(host, n, "localhost") || (n == 9 && !memcmp(host, "127.0.0.1", 9));
}

int http_path_is(const char *path, size_t len, const char *s)
{
    return strlen(s) == len && memcmp(path, s, len) == 0;
}

int http_query_value(const char *query, size_t len, const char *name, const char **value, size_t *value_len)
{
    size_t nl = strlen(name);
    for (size_t p = 0; query && p < len;) {
        const char *amp = memchr(query + p, '&', len - p);
        size_t end = amp ? (size_t)(amp - query) : len;
        if (end - p > nl && query[p + nl] == '=' && memcmp(query + p, name, nl) == 0) {
            *value = query + p + nl + 1;
            *value_len = end - p - nl - 1;
            return 1;
        }
        p = end + 1;
    }
    return 0;
}

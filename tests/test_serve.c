/* pith serve's pure parts: the HTTP request head parser, the API key
 * comparison, the Host check, and the reply text filter (stop strings and
 * the <think> split), fed whole, byte by byte and in uneven pieces. */
#include <stdlib.h>
#include <string.h>

#include "../src/server/http.h"
#include "../src/server/server.h"
#include "../src/text/reply_text.h"
#include "check.h"

static int parse(const char *head, HttpRequest *r)
{
    return http_parse_head(head, strlen(head), 4096, r);
}

static void test_http(void)
{
    HttpRequest r;
    const char *get = "GET /v1/models?x=1 HTTP/1.1\r\nHost: localhost:8080\r\nAuthorization: Bearer k\r\n\r\n";
    CHECK(parse(get, &r) == 1 && r.method == HTTP_GET && http_path_is(r.path, r.path_len, "/v1/models") &&
              r.head_len == strlen(get) && r.content_length == -1 && r.auth_len == 8 && r.host_len == 14,
          "http: GET with query, Host and Authorization");
    const char *post = "POST /v1/chat/completions HTTP/1.1\nContent-Type: application/json; charset=utf-8\n"
                       "Content-Length: 12\nExpect: 100-continue\n\n{\"a\":1}";
    CHECK(parse(post, &r) == 1 && r.method == HTTP_POST && r.content_length == 12 && r.content_json &&
              r.expect_continue && r.head_len == strlen(post) - 7,
          "http: POST with bare LF lines, JSON type, Content-Length, Expect");
    CHECK(parse("GET /health HTTP/1.1\r\nHost: x\r\n", &r) == 0, "http: an unfinished head needs more bytes");
    CHECK(parse("GET /health HTTP/1.1\r\nHo", &r) == 0, "http: a head cut in a line needs more bytes");
    CHECK(parse("\r\n", &r) < 0 && r.status == 400, "http: empty request line: 400");
    CHECK(parse("GET /health\r\n\r\n", &r) < 0 && r.status == 400, "http: no version: 400");
    CHECK(parse("GET /health HTTP/2.0\r\n\r\n", &r) < 0 && r.status == 505, "http: HTTP/2.0: 505");
    CHECK(parse("GET health HTTP/1.1\r\n\r\n", &r) < 0 && r.status == 400, "http: target not a path: 400");
    CHECK(parse("GET /a\x01 HTTP/1.1\r\n\r\n", &r) < 0 && r.status == 400, "http: control byte in the target: 400");
    CHECK(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r) < 0 && r.status == 501,
          "http: chunked request body: 501");
    CHECK(parse("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", &r) < 0 && r.status == 400,
          "http: conflicting Content-Length: 400");
    CHECK(parse("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", &r) == 1 && r.content_length == 5,
          "http: repeated equal Content-Length accepted");
    CHECK(parse("POST / HTTP/1.1\r\nContent-Length: -5\r\n\r\n", &r) < 0 && r.status == 400, "http: negative length: 400");
    CHECK(parse("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", &r) < 0 && r.status == 400,
          "http: huge length: 400");
    CHECK(parse("GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", &r) < 0 && r.status == 400, "http: space in a header name: 400");
    CHECK(parse("GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n", &r) < 0 && r.status == 400, "http: DEL in a header value: 400");
    CHECK(parse("GET / HTTP/1.1\r\nExpect: something\r\n\r\n", &r) < 0 && r.status == 417, "http: unknown Expect: 417");
    CHECK(parse("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", &r) < 0 && r.status == 400, "http: two Host headers: 400");
    CHECK(http_parse_head("GET /\0 HTTP/1.1", 15, 4096, &r) < 0 && r.status == 400, "http: NUL byte: 400");

    static char big[8192];
    memset(big, 'a', sizeof big);
    memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
    CHECK(http_parse_head(big, sizeof big, 4096, &r) < 0 && r.status == 431, "http: head longer than the limit: 431");
    char many[8192];
    size_t n = (size_t)snprintf(many, sizeof many, "GET / HTTP/1.1\r\n");
    for (int i = 0; i <= HTTP_MAX_HEADERS; i++) n += (size_t)snprintf(many + n, sizeof many - n, "X%d: y\r\n", i);
    n += (size_t)snprintf(many + n, sizeof many - n, "\r\n");
    CHECK(http_parse_head(many, n, sizeof many, &r) < 0 && r.status == 431, "http: too many header lines: 431");
    /* every prefix of a valid head asks for more, never fails */
    int prefixes_ok = 1;
    for (size_t k = 0; k < strlen(get) - 1; k++)
        if (http_parse_head(get, k, 4096, &r) != 0) prefixes_ok = 0;
    CHECK(prefixes_ok, "http: every prefix of a head needs more bytes");

    CHECK(http_bearer_matches("Bearer secret", 13, "secret", 6), "key: Bearer KEY matches");
    CHECK(http_bearer_matches("bearer secret", 13, "secret", 6), "key: scheme is case-insensitive");
    CHECK(!http_bearer_matches("Bearer secreT", 13, "secret", 6), "key: one byte differs");
    CHECK(!http_bearer_matches("Bearer secre", 12, "secret", 6), "key: a prefix of the key");
    CHECK(!http_bearer_matches("Bearer secret2", 14, "secret", 6), "key: the key and more");
    CHECK(!http_bearer_matches("Basic secret", 12, "secret", 6), "key: other scheme");
    CHECK(!http_bearer_matches(NULL, 0, "secret", 6), "key: no header");
    CHECK(!http_bearer_matches("Bearer ", 7, "secret", 6), "key: empty");

    CHECK(http_host_is_loopback("localhost:8080", 14) && http_host_is_loopback("127.0.0.1", 9) &&
              http_host_is_loopback("[::1]:80", 8) && http_host_is_loopback("LOCALHOST", 9),
          "host: loopback names");
    CHECK(!http_host_is_loopback("evil.example", 12) && !http_host_is_loopback("127.0.0.1.evil.example", 22) &&
              !http_host_is_loopback("localhost.evil", 14) && !http_host_is_loopback("[::1]x", 6) &&
              !http_host_is_loopback("192.168.1.2:8080", 16),
          "host: other names");
}

/* ---- the reply text --------------------------------------------------- */
typedef struct {
    char content[4096], reasoning[4096];
    size_t n_content, n_reasoning;
} Sink;

static void sink_emit(void *ctx, int kind, const char *p, size_t n)
{
    Sink *s = ctx;
    if (kind == REPLY_REASONING) {
        memcpy(s->reasoning + s->n_reasoning, p, n);
        s->n_reasoning += n;
    } else {
        memcpy(s->content + s->n_content, p, n);
        s->n_content += n;
    }
}

/* Feeds text in pieces of `step` bytes (0: all at once); returns whether a
 * stop string ended it. */
static int feed(Sink *s, int think, const char *const *stops, const char *text, size_t step)
{
    ReplyText t;
    memset(s, 0, sizeof *s);
    reply_text_init(&t, think, sink_emit, s);
    for (int i = 0; stops && stops[i]; i++) reply_text_add_stop(&t, stops[i], strlen(stops[i]));
    size_t n = strlen(text);
    int stopped = 0;
    if (step == 0) step = n ? n : 1;
    for (size_t i = 0; i < n && !stopped; i += step) stopped = reply_text_push(&t, text + i, i + step <= n ? step : n - i);
    reply_text_finish(&t);
    s->content[s->n_content] = '\0';
    s->reasoning[s->n_reasoning] = '\0';
    return stopped;
}

/* The same result for every way of cutting the text. */
static int feed_all(int think, const char *const *stops, const char *text, const char *content, const char *reasoning,
                    int stopped)
{
    Sink s;
    for (size_t step = 0; step <= 7; step++) {
        int st = feed(&s, think, stops, text, step);
        if (st != stopped || strcmp(s.content, content) || strcmp(s.reasoning, reasoning)) {
            printf("# step %zu: content '%s' reasoning '%s' stopped %d\n", step, s.content, s.reasoning, st);
            return 0;
        }
    }
    return 1;
}

static void test_text(void)
{
    CHECK(feed_all(0, NULL, "plain text\n", "plain text\n", "", 0), "text: passes through");
    CHECK(feed_all(1, NULL, "<think>\nI should greet.\n</think>\n\nHello!", "Hello!", "I should greet.", 0),
          "text: <think> block becomes reasoning, whitespace trimmed");
    CHECK(feed_all(1, NULL, "<think>\n\n</think>\n\nHi", "Hi", "", 0), "text: empty think block");
    CHECK(feed_all(0, NULL, "<think>x</think>y", "<think>x</think>y", "", 0), "text: no split when off");
    CHECK(feed_all(1, NULL, "<thinking>x", "<thinking>x", "", 0), "text: <thinking is not the tag");
    CHECK(feed_all(1, NULL, " <think>x</think>y", " <think>x</think>y", "", 0), "text: the tag only counts at the start");
    CHECK(feed_all(1, NULL, "<think>a < b </thin and </think>c", "c", "a < b </thin and", 0),
          "text: partial closing tags inside reasoning are text");
    CHECK(feed_all(1, NULL, "<think>unfinished  \n", "", "unfinished", 0), "text: unclosed think at the end");
    CHECK(feed_all(1, NULL, "<thi", "<thi", "", 0), "text: a cut opening tag is content");
    CHECK(feed_all(2, NULL, "\nI should greet. \n</think>\n\nHello!", "Hello!", "I should greet.", 0),
          "text: after a prompt that opened <think> (Qwen3.5), reasoning from the first byte");
    CHECK(feed_all(2, NULL, "unfinished", "", "unfinished", 0), "text: Qwen3.5's reasoning never closed");
    const char *stops1[] = {"world", NULL};
    CHECK(feed_all(0, stops1, "hello world and more", "hello ", "", 1), "stop: cut before the stop string");
    CHECK(feed_all(0, stops1, "hello wor", "hello wor", "", 0), "stop: a partial match at the end is text");
    const char *stops2[] = {"aab", "xyz", NULL};
    CHECK(feed_all(0, stops2, "aaab", "a", "", 1), "stop: overlapping prefixes");
    CHECK(feed_all(0, stops2, "axyaxyz", "axya", "", 1), "stop: second string");
    const char *stops3[] = {"</think>", NULL};
    CHECK(feed_all(1, stops3, "<think>abc</think>def", "", "abc", 1), "stop: applies before the think split");
    const char *stops4[] = {"END", NULL};
    CHECK(feed_all(1, stops4, "<think>r</think>\nans END tail", "ans ", "r", 1), "stop: in the content after thinking");
    ReplyText t;
    reply_text_init(&t, 0, sink_emit, NULL);
    char long_stop[REPLY_MAX_STOP_LEN + 1];
    memset(long_stop, 'x', sizeof long_stop);
    int r = reply_text_add_stop(&t, long_stop, sizeof long_stop);
    int n_ok = 0;
    for (int i = 0; i < 5; i++) n_ok += reply_text_add_stop(&t, "s", 1) == 0;
    CHECK(r < 0 && n_ok == REPLY_MAX_STOPS && reply_text_add_stop(&t, "", 0) < 0,
          "stop: too long, too many and empty strings are refused");
    /* a long run of whitespace inside reasoning is not held without bound */
    static char ws[2048];
    memcpy(ws, "<think>a", 8);
    memset(ws + 8, ' ', 1500);
    memcpy(ws + 1508, "b</think>c", 11);
    Sink s;
    feed(&s, 1, NULL, ws, 1);
    CHECK(s.n_reasoning == 1502 && s.reasoning[0] == 'a' && s.reasoning[1501] == 'b' && !strcmp(s.content, "c"),
          "text: 1500 spaces inside reasoning pass through");
}

/* Mutated and random heads: the parser answers 1, 0 or an error status,
 * never reads past the bytes it was given (ASan), and a complete head's
 * fields lie inside it. */
static void test_random(void)
{
    static const char base[] = "POST /v1/chat/completions?a=b HTTP/1.1\r\nHost: localhost:8080\r\n"
                               "Content-Type: application/json\r\nAuthorization: Bearer key\r\n"
                               "Content-Length: 17\r\nExpect: 100-continue\r\n\r\n{\"messages\": []}";
    uint64_t x = 88172645463325252ull;
    int bad = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char buf[sizeof base];
        size_t n = sizeof base - 1;
        memcpy(buf, base, n);
        int muts = 1 + iter % 4;
        for (int m = 0; m < muts; m++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            if (n == 0) break;
            size_t at = (size_t)(x % n);
            if (iter % 3 == 0) buf[at] = (char)(x >> 24);          /* any byte */
            else if (iter % 3 == 1) buf[at] = "\r\n: /\t0A"[(x >> 24) % 8]; /* structure bytes */
            else n = at;                                               /* cut */
        }
        char *heap = malloc(n ? n : 1); /* exact size: ASan sees any read past it */
        memcpy(heap, buf, n);
        HttpRequest r;
        int res = http_parse_head(heap, n, 4096, &r);
        if (res == 1) {
            if (r.head_len > n || !r.path || r.path < heap || r.path + r.path_len > heap + n ||
                (r.auth && (r.auth < heap || r.auth + r.auth_len > heap + n)))
                bad++;
        } else if (res < 0) {
            if (r.status < 400 || r.status > 505 || !r.why) bad++;
        } else if (res != 0) bad++;
        free(heap);
    }
    CHECK(bad == 0, "http: 20000 mutated heads parse or fail cleanly");

    /* random text through random stops: without thinking, the content is
     * exactly the text up to the first stop string */
    int wrong = 0;
    for (int iter = 0; iter < 5000; iter++) {
        char text[64], stop_a[4], stop_b[4];
        for (size_t i = 0; i < sizeof text - 1; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            text[i] = "ab<>/ \n"[x % 7];
        }
        text[sizeof text - 1] = '\0';
        for (int i = 0; i < 3; i++) stop_a[i] = "ab<"[(x >> (3 * i)) % 3], stop_b[i] = "ab/"[(x >> (9 + 3 * i)) % 3];
        stop_a[1 + (x >> 20) % 3] = '\0';
        stop_b[3] = '\0';
        const char *stops[] = {stop_a, stop_b, NULL};
        /* the match that ends first; at a tie the longer one */
        const char *hit = NULL;
        for (size_t end = 1; end <= strlen(text) && !hit; end++)
            for (int k = 0; k < 2; k++) {
                size_t sl = strlen(stops[k]);
                if (sl <= end && !memcmp(text + end - sl, stops[k], sl) && (!hit || text + end - sl < hit))
                    hit = text + end - sl;
            }
        size_t want = hit ? (size_t)(hit - text) : strlen(text);
        Sink sk;
        int st = feed(&sk, 0, stops, text, 1 + iter % 5);
        if (st != (hit != NULL) || sk.n_content != want || memcmp(sk.content, text, want) != 0 || sk.n_reasoning) wrong++;
    }
    CHECK(wrong == 0, "stop: 5000 random texts and stop strings cut at the match that ends first");
}

int main(void)
{
    test_http();
    test_text();
    test_random();
    CHECK_DONE();
}

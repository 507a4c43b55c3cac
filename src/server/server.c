/* The server's event loop: a fixed table of connections, read with
 * deadlines, answered or queued; each request waits for a free slot and
 * server_api.c advances every busy slot together, one engine step at a
 * time. */
#include "server.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "../text/chat_request.h"
#include "../text/json.h"

#define LISTEN_BACKLOG 64
#define DRAIN_SECONDS 1.0        /* a closing connection reads what its client still sends */
#define ACCEPT_PER_ROUND 64

static int n_slots(const ServerOptions *o)
{
    return o->slots > 0 ? o->slots : 1;
}

/* One request's scratch: a completion's prompt decoded from the body, or
 * a chat's rendered prompt and the template's work (reused by
 * /apply-template for the prompt as a JSON string). */
static uint64_t region_bytes(const ServerOptions *o)
{
    uint64_t out = o->max_text + 1;
    uint64_t chat = out + chat_input_scratch_bound(o->max_body, out);
    uint64_t reply = out + 6 * out + 64; /* /apply-template's answer */
    uint64_t completion = o->max_body + 64;
    uint64_t most = chat > reply ? chat : reply;
    return (most > completion ? most : completion) + 64 * ARENA_ALIGN;
}

void server_plan(const ServerOptions *o, Plan *plan)
{
    uint64_t n_conns = (uint64_t)o->queue + (uint64_t)n_slots(o);
    plan_add(plan, "server connections", plan_mul(plan, n_conns, sizeof(Conn)));
    plan_add(plan, "server request buffers", plan_mul(plan, n_conns, SERVE_MAX_HEAD + o->max_body));
    plan_add(plan, "server request scratch", region_bytes(o));
    /* each slot's reply outlives the request scratch (the next request
     * reuses it): its response buffer and its tool-call buffers */
    for (int i = 0; i < n_slots(o); i++) {
        plan_add(plan, n_slots(o) > 1 ? "server response buffers, one per slot" : "server response buffer",
                 SERVE_OUT_CAP + 64);
        plan_add(plan, n_slots(o) > 1 ? "server tool-call arrays, one per slot" : "server tool-call array",
                 SERVE_CALLS_CAP);
    }
}

int server_init(Server *sv, const ServerOptions *o, Engine *e, char *err, size_t cap)
{
    sv->opt = *o;
    sv->e = e;
    /* The server's buffers were planned into the engine's arena
     * (EngineOptions.plan_extra): carve them from it. */
    Arena *arena = &e->arena;
    sv->n_slots = n_slots(o);
    sv->n_conns = o->queue + sv->n_slots;
    sv->started = port_seconds();
    sv->conn_cap = SERVE_MAX_HEAD + (size_t)o->max_body;
    sv->conns = arena_take(arena, (uint64_t)sv->n_conns * sizeof(Conn));
    static const char too_small[] = "internal error: the server plan is too small";
    if (!sv->conns) return snprintf(err, cap, "%s", too_small), -1;
    for (int i = 0; i < sv->n_conns; i++) {
        sv->conns[i].fd = -1;
        sv->conns[i].buf = arena_take(arena, sv->conn_cap);
        if (!sv->conns[i].buf) return snprintf(err, cap, "%s", too_small), -1;
    }
    sv->region_size = region_bytes(o);
    sv->region = arena_take(arena, sv->region_size);
    for (int i = 0; i < sv->n_slots; i++)
        if (!(sv->slot_out[i] = arena_take(arena, SERVE_OUT_CAP + 64)) ||
            !(sv->slot_calls[i] = arena_take(arena, SERVE_CALLS_CAP)))
            return snprintf(err, cap, "%s", too_small), -1;
    sv->out = sv->slot_out[0];
    if (!sv->region) return snprintf(err, cap, "%s", too_small), -1;

    sv->listen_fd = port_net_listen(o->host, o->port, LISTEN_BACKLOG, &sv->bound_port, err, cap);
    if (sv->listen_fd < 0) return -1;
    const char *h = o->host;
    sv->loopback = !strcmp(h, "localhost") || !strncmp(h, "127.", 4) || !strcmp(h, "::1");
    return 0;
}

/* ---- Writing ----------------------------------------------------------- */

/* Sends all of bytes, waiting while the client's window is full, up to
 * --timeout without progress. Returns 0, or -1 (the client is gone). */
static int send_all(Server *sv, int fd, const char *p, size_t n)
{
    double deadline = port_seconds() + sv->opt.timeout;
    while (n) {
        long w = port_net_send(fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            deadline = port_seconds() + sv->opt.timeout;
            continue;
        }
        if (w == -2) return -1;
        double left = deadline - port_seconds();
        if (left <= 0) return -1;
        PortPoll pp = {fd, PORT_NET_WRITE, 0};
        if (port_net_poll(&pp, 1, (int)(left * 1000) + 1) < 0) return -1;
    }
    return 0;
}

void server_close(Server *sv, Conn *c, int linger)
{
    if (c == sv->active) sv->active = NULL;
    if (linger && c->fd >= 0) {
        /* FIN first, then read until the client closes (or a second
         * passes): closing with unread bytes would reset the connection
         * and could destroy the response before the client reads it. */
        port_net_shutdown_write(c->fd);
        c->state = CONN_DRAIN;
        c->deadline = port_seconds() + DRAIN_SECONDS;
        return;
    }
    port_net_close(c->fd);
    c->fd = -1;
    c->state = CONN_FREE;
    c->len = 0;
}

void server_respond(Server *sv, Conn *c, int status, const char *content_type, const char *body, size_t n)
{
    char head[512];
    int k = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n"
                     "Cache-Control: no-store\r\n%s\r\n",
                     status, http_status_text(status), content_type, n,
                     status == 401 ? "WWW-Authenticate: Bearer\r\n" : status == 503 ? "Retry-After: 1\r\n" : "");
    if (send_all(sv, c->fd, head, (size_t)k) == 0 && n) send_all(sv, c->fd, body, n);
    server_close(sv, c, 1);
}

static const char *error_type(int status)
{
    if (status == 401) return "authentication_error";
    if (status == 404) return "not_found_error";
    if (status >= 500) return "server_error";
    return "invalid_request_error";
}

void server_error(Server *sv, Conn *c, int status, const char *code, const char *fmt, ...)
{
    char msg[512], esc[1200], body[1600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_escape(msg, strlen(msg), esc, sizeof esc);
    int n = snprintf(body, sizeof body, "{\"error\":{\"message\":%s,\"type\":\"%s\",\"code\":\"%s\"}}\n", esc,
                     error_type(status), code);
    if (n < 0 || (size_t)n >= sizeof body) n = 0;
    port_err("serve: %d %s\n", status, msg);
    server_respond(sv, c, status, "application/json", body, (size_t)n);
}

void server_out_head(Server *sv, Conn *c, const char *content_type)
{
    char head[512];
    int k = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n"
                     "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\n\r\n",
                     content_type);
    sv->out_len = 0;
    sv->out_chunked = 1;
    sv->out_failed = send_all(sv, c->fd, head, (size_t)k) != 0;
}

void server_out_flush(Server *sv)
{
    Conn *c = sv->active;
    if (!sv->out_failed && c && sv->out_len) {
        char size[24];
        int k = snprintf(size, sizeof size, "%zx\r\n", sv->out_len);
        memcpy(sv->out + sv->out_len, "\r\n", 2);
        if (send_all(sv, c->fd, size, (size_t)k) != 0 || send_all(sv, c->fd, sv->out, sv->out_len + 2) != 0)
            sv->out_failed = 1;
    }
    sv->out_len = 0;
}

void server_out(Server *sv, const char *p, size_t n)
{
    while (n) {
        size_t room = SERVE_OUT_CAP - sv->out_len;
        size_t k = n < room ? n : room;
        memcpy(sv->out + sv->out_len, p, k);
        sv->out_len += k;
        p += k;
        n -= k;
        if (sv->out_len == SERVE_OUT_CAP) server_out_flush(sv);
    }
}

void server_outf(Server *sv, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0) server_out(sv, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

void server_out_json_text(Server *sv, const char *p, size_t n)
{
    char esc[6 * 64 + 8];
    while (n) {
        size_t k = n < 64 ? n : 64;
        size_t e = json_escape(p, k, esc, sizeof esc); /* with its quotes */
        server_out(sv, esc + 1, e - 2);
        p += k;
        n -= k;
    }
}

void server_out_end(Server *sv)
{
    server_out_flush(sv);
    Conn *c = sv->active;
    if (!sv->out_failed && c && send_all(sv, c->fd, "0\r\n\r\n", 5) != 0) sv->out_failed = 1;
}

/* ---- Reading ------------------------------------------------------------ */

static Conn *free_conn(Server *sv)
{
    for (int i = 0; i < sv->n_conns; i++)
        if (sv->conns[i].state == CONN_FREE) return &sv->conns[i];
    return NULL;
}

/* Past the table: a fixed 503 without reading the request, then close. */
static void refuse(Server *sv, int fd)
{
    static const char busy[] =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 107\r\n"
        "Connection: close\r\nRetry-After: 1\r\n\r\n"
        "{\"error\":{\"message\":\"the server is busy: too many connections\",\"type\":\"server_error\",\"code\":\"busy\"}}\n";
    (void)sv;
    /* what the client already sent is read first, so closing sends a FIN,
     * not a reset that could hide the 503 */
    char sink[4096];
    port_net_recv(fd, sink, sizeof sink);
    port_net_send(fd, busy, sizeof busy - 1);
    port_net_shutdown_write(fd);
    port_net_recv(fd, sink, sizeof sink);
    port_net_close(fd);
}

static void accept_new(Server *sv)
{
    for (int k = 0; k < ACCEPT_PER_ROUND; k++) {
        int fd = port_net_accept(sv->listen_fd);
        if (fd < 0) return;
        Conn *c = free_conn(sv);
        if (!c) {
            refuse(sv, fd);
            continue;
        }
        memset(&c->req, 0, sizeof c->req);
        c->gone = 0;
        c->fd = fd;
        c->state = CONN_HEAD;
        c->len = 0;
        c->deadline = port_seconds() + sv->opt.timeout;
    }
}

/* Checks a complete head before its body is read: method, path, key,
 * Host, type and size. Returns 0 to go on, -1 when answered. */
static int check_head(Server *sv, Conn *c)
{
    HttpRequest *r = &c->req;
    /* /health is public: service managers and load balancers probe it
     * without credentials (it says only that the server is up). */
    int health = http_path_is(r->path, r->path_len, "/health");
    if (sv->opt.api_key && !health && !http_bearer_matches(r->auth, r->auth_len, sv->opt.api_key, sv->opt.api_key_len)) {
        server_error(sv, c, 401, "invalid_api_key",
                     r->auth ? "invalid API key" : "an API key is required (Authorization: Bearer KEY)");
        return -1;
    }
    if (sv->loopback && r->host && !http_host_is_loopback(r->host, r->host_len)) {
        /* a page on another site that rebinds its name to 127.0.0.1 */
        server_error(sv, c, 403, "forbidden_host", "this server listens on loopback only: Host must be localhost");
        return -1;
    }
    int gen = http_path_is(r->path, r->path_len, "/v1/chat/completions") ||
              http_path_is(r->path, r->path_len, "/chat/completions") ||
              http_path_is(r->path, r->path_len, "/v1/completions") ||
              http_path_is(r->path, r->path_len, "/completions") || http_path_is(r->path, r->path_len, "/apply-template");
    /* POST /slots/ID?action=save|restore|erase (llama-server's; answered by
     * the endpoints, which refuse it without --slot-save-path) */
    int action = r->path_len > 7 && memcmp(r->path, "/slots/", 7) == 0;
    if (action && r->content_length < 0) r->content_length = 0; /* erase needs no body */
    gen |= action;
    int get = health || http_path_is(r->path, r->path_len, "/v1/models") ||
              http_path_is(r->path, r->path_len, "/models") || http_path_is(r->path, r->path_len, "/slots") ||
              (sv->opt.metrics && http_path_is(r->path, r->path_len, "/metrics"));
    if (!gen && !get) {
        server_error(sv, c, 404, "not_found", "no such endpoint: %.*s", (int)(r->path_len < 200 ? r->path_len : 200),
                     r->path);
        return -1;
    }
    if ((gen && r->method != HTTP_POST) || (get && r->method != HTTP_GET)) {
        server_error(sv, c, 405, "method_not_allowed", "%s needs %s", gen ? "this endpoint" : "this endpoint",
                     gen ? "POST" : "GET");
        return -1;
    }
    if (gen) {
        if (r->content_length < 0) { /* a slot action's was set to 0 above */
            server_error(sv, c, 411, "length_required", "a request body with Content-Length is required");
            return -1;
        }
        if ((uint64_t)r->content_length > sv->opt.max_body) {
            server_error(sv, c, 413, "body_too_large", "the request body of %lld bytes is larger than %llu (--max-body)",
                         (long long)r->content_length, (unsigned long long)sv->opt.max_body);
            return -1;
        }
        if (!r->content_json && !(action && r->content_length == 0)) {
            server_error(sv, c, 415, "unsupported_media_type", "the body must be JSON (Content-Type: application/json)");
            return -1;
        }
    } else if (r->content_length > 0) {
        server_error(sv, c, 400, "unexpected_body", "a GET request has no body");
        return -1;
    }
    return 0;
}

static void body_progress(Server *sv, Conn *c)
{
    if (c->len >= c->req.head_len + (size_t)c->req.content_length) {
        c->state = CONN_QUEUED;
        c->seq = sv->next_seq++;
        sv->dispatch(sv, c);
    }
}

static void read_conn(Server *sv, Conn *c)
{
    char sink[4096];
    if (c->state == CONN_DRAIN || c->state == CONN_QUEUED || c->state == CONN_ACTIVE) {
        /* nothing more is expected: read it away, notice a close */
        long n = port_net_recv(c->fd, sink, sizeof sink);
        if (n == 0 || n == -2) {
            if (c->state == CONN_ACTIVE) {
                c->gone = 1; /* its slot is freed at the next step */
                if (c == sv->active) sv->out_failed = 1;
            } else server_close(sv, c, 0);
        }
        return;
    }
    size_t want = c->state == CONN_HEAD ? SERVE_MAX_HEAD : c->req.head_len + (size_t)c->req.content_length;
    if (c->len >= want) return;
    long n = port_net_recv(c->fd, c->buf + c->len, want - c->len);
    if (n == -1) return;
    if (n == 0 || n == -2) {
        server_close(sv, c, 0); /* the client gave up before its request was complete */
        return;
    }
    c->len += (size_t)n;
    if (c->state == CONN_HEAD) {
        int r = http_parse_head(c->buf, c->len, SERVE_MAX_HEAD, &c->req);
        if (r < 0) {
            server_error(sv, c, c->req.status, "bad_request", "%s", c->req.why);
            return;
        }
        if (r == 0) return;
        if (check_head(sv, c) != 0) return;
        c->state = CONN_BODY;
        c->deadline = port_seconds() + sv->opt.timeout;
        if (c->req.expect_continue && c->len < c->req.head_len + (size_t)c->req.content_length) {
            static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
            if (send_all(sv, c->fd, cont, sizeof cont - 1) != 0) {
                server_close(sv, c, 0);
                return;
            }
        }
    }
    body_progress(sv, c);
}

void server_service(Server *sv, int timeout_ms)
{
    PortPoll pp[PORT_NET_MAX_POLL];
    Conn *who[PORT_NET_MAX_POLL];
    int n = 0;
    pp[n].fd = sv->listen_fd;
    pp[n].want = PORT_NET_READ;
    who[n++] = NULL;
    double now = port_seconds();
    for (int i = 0; i < sv->n_conns && n < PORT_NET_MAX_POLL; i++) {
        Conn *c = &sv->conns[i];
        if (c->state == CONN_FREE) continue;
        if (c->state == CONN_HEAD || c->state == CONN_BODY || c->state == CONN_DRAIN) {
            double left = c->deadline - now;
            int ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
            if (timeout_ms < 0 || ms < timeout_ms) timeout_ms = ms;
        }
        pp[n].fd = c->fd;
        pp[n].want = PORT_NET_READ;
        who[n++] = c;
    }
    if (port_net_poll(pp, n, timeout_ms) < 0) return;
    for (int i = 1; i < n; i++)
        if (pp[i].got) read_conn(sv, who[i]);
    if (pp[0].got & PORT_NET_READ) accept_new(sv);
    /* deadlines */
    now = port_seconds();
    for (int i = 0; i < sv->n_conns; i++) {
        Conn *c = &sv->conns[i];
        if (c->deadline > now) continue;
        if (c->state == CONN_DRAIN) server_close(sv, c, 0);
        else if (c->state == CONN_HEAD || c->state == CONN_BODY)
            server_error(sv, c, 408, "timeout", "the request did not arrive within %g s (--timeout)", sv->opt.timeout);
    }
}

int server_queued(const Server *sv)
{
    int n = 0;
    for (int i = 0; i < sv->n_conns; i++) n += sv->conns[i].state == CONN_QUEUED;
    return n;
}

_Noreturn void server_run(Server *sv)
{
    for (;;) {
        /* queued requests take the free slots, first come first served */
        while (sv->n_busy < sv->n_slots) {
            Conn *next = NULL;
            for (int i = 0; i < sv->n_conns; i++) {
                Conn *c = &sv->conns[i];
                if (c->state == CONN_QUEUED && (!next || c->seq < next->seq)) next = c;
            }
            if (!next) break;
            next->state = CONN_ACTIVE;
            sv->generate(sv, next); /* takes a slot, or answers an error */
        }
        if (sv->n_busy) {
            sv->step(sv);
            server_service(sv, 0); /* between steps: other clients, and ours leaving */
        } else {
            if (sv->idle && !server_queued(sv)) sv->idle(sv);
            server_service(sv, 1000);
        }
    }
}

/* This folder: src/server/ - `pith serve`: HTTP, the event loop, the
 * OpenAI endpoints and which request goes to which slot. May call
 * src/engine/, src/text/, src/gguf/, src/arena/, src/base/ and port/
 * (sockets, time), never src/model/ or src/kernels/: the model is the
 * engine's. */
/* server.h - `pith serve`: an OpenAI-compatible HTTP server around one
 * loaded Engine (engine.h).
 *
 * One thread, one event loop (server.c) over a fixed table of connections:
 * the listening socket, clients sending their request (head, then body),
 * requests waiting for the model (the queue), and closing connections
 * draining what their client still sends. The model serves up to --slots
 * requests together (one step feeds a token of each); between steps the
 * loop keeps running, so new clients are read, queued, answered (health,
 * models, slots, metrics, errors) or refused (503) without waiting.
 *
 * Memory: every buffer is planned before the model loads (server_plan)
 * and carved from the server's arena (server_init): per connection a
 * buffer of head + --max-body bytes, one region for the request being
 * served (the conversation read from JSON and its rendered text, bounded
 * by chat_arena_bound(--max-body)), and per slot an output buffer and
 * the tool_calls array of its reply (SERVE_CALLS_CAP: a reply outlives the request
 * region, which the next request reuses); the tokens' log probabilities
 * are the engine's (Slot.probs, planned per context position). A flood of
 * connections cannot grow anything: past the table, a new connection gets
 * an immediate 503 and is closed.
 *
 * The endpoints (server_api.c): POST /v1/chat/completions,
 * POST /v1/completions, GET /v1/models, GET /health, GET /slots,
 * POST /slots/ID?action=save|restore|erase (--slot-save-path) and, with
 * --metrics, GET /metrics. */
#ifndef PITH_SERVER_H
#define PITH_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "../arena/arena.h"
#include "http.h"
#include "../engine/engine.h"

#define SERVE_MAX_HEAD (16 * 1024)    /* request line and headers */
#define SERVE_OUT_CAP (64 * 1024)     /* response buffer: one HTTP chunk */
#define SERVE_CALLS_CAP (120 * 1024) /* a slot's reply: the tool_calls array of a whole reply (server_api.c) */
#define SERVE_BYTES_PER_TOKEN 16      /* prompt text planned per context token (plus 64 KiB) */

/* ---- The server ---------------------------------------------------------- */
typedef struct {
    const char *host;          /* --host, default 127.0.0.1 */
    int port;                  /* --port, default 8080 (0: any free port) */
    const char *api_key;       /* --api-key or the first line of --api-key-file; NULL: none */
    size_t api_key_len;
    uint64_t max_body;         /* --max-body, default 1 MiB */
    int queue;                 /* --queue: connections waiting besides the one served */
    double timeout;            /* --timeout seconds: request head, body, each stalled write */
    int sampling_cli[4];       /* --temp, --top-k, --top-p, --min-p given on the command line */
    int slots;                 /* --slots: requests generated together (0 counts as 1) */
    int metrics;               /* --metrics: GET /metrics answers */
    const char *slot_save_path;/* --slot-save-path: POST /slots/ID?action= files' folder; NULL: refused */
    const char *cache_dir;     /* --cache-dir: prompts' caches kept on disk (server_api.c), or NULL */
    uint64_t cache_dir_size;   /* --cache-dir-size: the most its files take */
    uint64_t max_text;         /* the engine's longest prompt text (EngineOptions.max_text) */
} ServerOptions;

enum { CONN_FREE = 0, CONN_HEAD, CONN_BODY, CONN_QUEUED, CONN_ACTIVE, CONN_DRAIN };

typedef struct {
    int fd;
    int state;                 /* CONN_* */
    double deadline;           /* port_seconds() when reading or draining gives up */
    uint64_t seq;              /* arrival order: the queue is served first come, first served */
    char *buf;                 /* head + body: SERVE_MAX_HEAD + max_body bytes */
    size_t len;
    HttpRequest req;
    int gone;                  /* CONN_ACTIVE: the client closed; its slot is freed at the next step */
} Conn;

typedef struct Server {
    ServerOptions opt;
    Engine *e;
    /* The endpoints (server_api.h), given by the command: a complete
     * request whose head passed the checks (answered at once, or queued),
     * and a queued generation request (the connection is closed after). */
    void (*dispatch)(struct Server *sv, Conn *c);
    void (*generate)(struct Server *sv, Conn *c);
    /* One decoding step of every busy slot (continuous batching). */
    void (*step)(struct Server *sv);
    /* Work for when no slot is busy and no request waits (--cache-dir's writes). */
    void (*idle)(struct Server *sv);
    char model_name[1024];     /* the model file's name as a JSON string (at most 120 bytes, escaped) */
    int loopback;              /* bound to a loopback address: Host must name it too */
    int listen_fd;
    int bound_port;
    uint64_t planned;         /* bytes of the engine's arena the server uses */
    Conn *conns;
    int n_conns;
    size_t conn_cap;
    uint8_t *region;           /* per-request scratch, reused by every request */
    uint64_t region_size;
    char *out;                 /* response buffer of the slot being written (slot_out[i]) */
    char *slot_out[ENGINE_MAX_SLOTS]; /* each slot's response buffer */
    char *slot_calls[ENGINE_MAX_SLOTS]; /* each slot's tool_calls array (SERVE_CALLS_CAP) */
    int n_slots;               /* --slots */
    int n_busy;                /* slots holding a request (server_api.c keeps it) */
    size_t out_len;
    int out_chunked;
    int out_failed;            /* the client is gone or stalled: stop writing */
    Conn *active;              /* the request being generated, or NULL */
    uint64_t next_seq;
    uint64_t n_requests;
    SamplerParams cli_sampling; /* the command line's sampling settings */
    /* /metrics */
    double started;            /* port_seconds() at start */
    uint64_t n_requests_slotted; /* generation requests that took a slot */
    uint64_t n_done;           /* generation requests answered in full */
    uint64_t n_prompt_tokens, n_cached_tokens, n_gen_tokens;
    uint64_t n_steps;          /* forward steps of the slots */
    double step_seconds;       /* time in them */
} Server;

/* Adds the server's buffers to plan (before anything is mapped). */
void server_plan(const ServerOptions *o, Plan *plan);
/* Carves the server's buffers from the engine's arena, listens. Returns
 * 0, or -1 with one line in err. */
int server_init(Server *sv, const ServerOptions *o, Engine *e, char *err, size_t cap);
/* Serves for ever. */
_Noreturn void server_run(Server *sv);

/* server.c, for server_api.c */
/* Runs the event loop once without waiting (between generated tokens):
 * accepts, reads, answers or queues; reports the active client gone. */
void server_service(Server *sv, int timeout_ms);
/* Connections waiting for a slot. */
int server_queued(const Server *sv);
/* Sends a complete small response and starts closing the connection. */
void server_respond(Server *sv, Conn *c, int status, const char *content_type, const char *body, size_t n);
/* An OpenAI-style error: {"error": {"message", "type", "code"}}. */
void server_error(Server *sv, Conn *c, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Response output for the active connection: the head is written as is,
 * then the body in HTTP chunks of at most SERVE_OUT_CAP bytes. */
void server_out_head(Server *sv, Conn *c, const char *content_type);
void server_out(Server *sv, const char *bytes, size_t n);
void server_outf(Server *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void server_out_json_text(Server *sv, const char *bytes, size_t n); /* escaped, no quotes */
void server_out_flush(Server *sv);
void server_out_end(Server *sv);
/* Ends a connection: lingering close after a response, so the client
 * reads all of it before the socket goes away. */
void server_close(Server *sv, Conn *c, int linger);

#endif

/* The OpenAI-compatible endpoints of `pith serve`: requests read from
 * JSON, prompts rendered with the model's chat template, generation with
 * prefix reuse, and replies written as JSON or server-sent events while
 * they are generated. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "../text/chat.h"
#include "../text/json.h"
#include "server_api.h"
#include "server_tools.h"

#define TOOL_BLOCK_CAP (64 * 1024) /* one <tool_call> block of a reply */
#define TOOL_CALLS_CAP (120 * 1024) /* the tool_calls array of a whole reply; then the table of string parameters */
_Static_assert(TOOL_BLOCK_CAP + TOOL_CALLS_CAP + TOOL_KINDS_CAP <= SERVE_TOOLS_SCRATCH, "a slot's tool-call buffers");

typedef struct {
    int chat;                /* /v1/chat/completions (else /v1/completions) */
    int stream;
    int include_usage;       /* stream_options.include_usage */
    int thinking;
    int64_t max_tokens;      /* -1: until the context is full */
    SamplerParams sp;
    int set[4];              /* temperature, top_k, top_p, min_p given */
    int seed_set;
    uint64_t seed;
    const char *prompt;      /* completions: decoded prompt text */
    size_t prompt_len;
    size_t response_format;  /* offsets in the body, or API_ABSENT */
    size_t tool_choice;
    size_t tools;
    char why[400];           /* what is wrong with the request */
} Request;

/* The reply being written. */
typedef struct {
    Server *sv;
    Request *rq;
    uint64_t id;
    int64_t created;
    int field;               /* string open in the output: 0 none, 1 content, 2 reasoning */
    int chunk_open;          /* streaming: a data: chunk has been started for this token */
    int any_content;
    ServeText text;
    TokenStream ts;
    int split_tools;         /* content goes through the <tool_call> splitter */
    ToolSplit split;
    char *calls;             /* non-streamed: the tool_calls array so far */
    size_t calls_n, calls_cap;
} Reply;

/* What reply_token returns to stop the generation. */
enum { REPLY_STOPPED = 1, REPLY_GONE = 2 };

#define OUT_LIT(sv, lit) server_out((sv), lit, sizeof lit - 1)

static const char *model_json(Server *sv)
{
    return sv->model_name;
}

/* ---- Reading the request ------------------------------------------------ */

static int bad(Request *rq, const char *key, const char *what)
{
    snprintf(rq->why, sizeof rq->why, "%s: %s", key, what);
    return -1;
}

/* A JSON syntax error (or a value too long) is reported as Json has it. */
static int json_bad(Request *rq, Json *j)
{
    snprintf(rq->why, sizeof rq->why, "%s", j->err[0] ? j->err : "request: malformed JSON");
    return -1;
}

static int is_null(Json *j)
{
    if (json_peek(j) != JSON_NULL) return 0;
    JsonType t;
    json_literal(j, &t);
    return 1;
}

static int read_number(Request *rq, Json *j, const char *key, double lo, double hi, int integer, double *v)
{
    JsonType t = json_peek(j);
    if (t != JSON_NUMBER) {
        if (j->failed) return json_bad(rq, j);
        snprintf(rq->why, sizeof rq->why, "%s: expected a number, found %s", key, json_type_name(t));
        return -1;
    }
    const char *text;
    size_t len;
    if (json_number(j, &text, &len, v) < 0) return json_bad(rq, j);
    if (integer && (*v != floor(*v))) return bad(rq, key, "expected an integer");
    if (!(*v >= lo && *v <= hi)) {
        snprintf(rq->why, sizeof rq->why, "%s: %g is out of range [%g, %g]", key, *v, lo, hi);
        return -1;
    }
    return 0;
}

static int read_bool(Request *rq, Json *j, const char *key, int *v)
{
    JsonType t = json_peek(j);
    if (t != JSON_TRUE && t != JSON_FALSE) {
        if (j->failed) return json_bad(rq, j);
        snprintf(rq->why, sizeof rq->why, "%s: expected true or false, found %s", key, json_type_name(t));
        return -1;
    }
    json_literal(j, &t);
    *v = t == JSON_TRUE;
    return 0;
}

/* A string value decoded into the request scratch. */
static int read_text(Request *rq, Json *j, Arena *ra, const char *key, const char **out, size_t *out_len)
{
    if (json_peek(j) != JSON_STRING) {
        if (j->failed) return json_bad(rq, j);
        snprintf(rq->why, sizeof rq->why, "%s: expected a string, found %s", key, json_type_name(json_peek(j)));
        return -1;
    }
    Json save = *j;
    size_t n;
    if (json_string(j, NULL, (size_t)-1, &n) < 0) return json_bad(rq, j);
    char *buf = arena_take(ra, n + 1);
    if (!buf) return bad(rq, key, "does not fit in the request scratch");
    *j = save;
    if (json_string(j, buf, n + 1, &n) < 0) return json_bad(rq, j);
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    return 0;
}

static int read_stop(Request *rq, Json *j, Reply *rp)
{
    char buf[SERVE_MAX_STOP_LEN];
    size_t n;
    JsonType t = json_peek(j);
    if (t == JSON_STRING) {
        Json save = *j;
        if (json_string(j, NULL, (size_t)-1, &n) < 0) return json_bad(rq, j);
        if (n > SERVE_MAX_STOP_LEN) return bad(rq, "stop", "a stop string is longer than 128 bytes");
        *j = save;
        if (json_string(j, buf, sizeof buf, &n) < 0) return json_bad(rq, j);
        if (n && serve_text_add_stop(&rp->text, buf, n) != 0) return bad(rq, "stop", "too many stop strings");
        return 0;
    }
    if (t != JSON_ARRAY) {
        if (j->failed) return json_bad(rq, j);
        return bad(rq, "stop", "expected a string or an array of strings");
    }
    json_enter(j, '[');
    int r;
    while ((r = json_next(j, ']')) > 0) {
        if (json_peek(j) != JSON_STRING) return bad(rq, "stop", "expected a string or an array of strings");
        Json save = *j;
        if (json_string(j, NULL, (size_t)-1, &n) < 0) return json_bad(rq, j);
        if (n > SERVE_MAX_STOP_LEN) return bad(rq, "stop", "a stop string is longer than 128 bytes");
        *j = save;
        if (json_string(j, buf, sizeof buf, &n) < 0) return json_bad(rq, j);
        if (n && serve_text_add_stop(&rp->text, buf, n) != 0) return bad(rq, "stop", "more than 4 stop strings");
    }
    return r < 0 ? json_bad(rq, j) : 0;
}

/* An object of which one boolean key matters (chat_template_kwargs,
 * stream_options); other keys are skipped. `path` names it in errors. */
static int read_bool_in_object(Request *rq, Json *j, const char *field, const char *key, const char *path, int *out)
{
    if (json_peek(j) != JSON_OBJECT) {
        if (j->failed) return json_bad(rq, j);
        return bad(rq, field, "expected an object");
    }
    json_enter(j, '{');
    int r;
    while ((r = json_next(j, '}')) > 0) {
        char name[128];
        size_t kl;
        if (json_key(j, name, sizeof name - 1, &kl) < 0) return json_bad(rq, j);
        name[kl] = '\0';
        if (!strcmp(name, key)) {
            if (read_bool(rq, j, path, out) < 0) return -1;
        } else if (json_skip(j) < 0) return json_bad(rq, j);
    }
    return r < 0 ? json_bad(rq, j) : 0;
}

static int read_kwargs(Request *rq, Json *j)
{
    return read_bool_in_object(rq, j, "chat_template_kwargs", "enable_thinking", "chat_template_kwargs.enable_thinking",
                               &rq->thinking);
}

static int read_stream_options(Request *rq, Json *j)
{
    return read_bool_in_object(rq, j, "stream_options", "include_usage", "stream_options.include_usage",
                               &rq->include_usage);
}

static int read_prompt(Request *rq, Json *j, Arena *ra)
{
    if (json_peek(j) == JSON_ARRAY) {
        /* ["text"]: one prompt (several would need several choices) */
        json_enter(j, '[');
        int r = json_next(j, ']');
        if (r < 0) return json_bad(rq, j);
        if (r == 0) return bad(rq, "prompt", "the array is empty");
        if (read_text(rq, j, ra, "prompt", &rq->prompt, &rq->prompt_len) < 0) return -1;
        r = json_next(j, ']');
        if (r < 0) return json_bad(rq, j);
        if (r > 0) return bad(rq, "prompt", "only one prompt per request is supported");
        return 0;
    }
    return read_text(rq, j, ra, "prompt", &rq->prompt, &rq->prompt_len);
}

/* One pass over the top-level object; messages and tools are read by
 * chat_json_read afterwards. */
static int read_request(Request *rq, Reply *rp, const char *body, size_t len, Arena *ra)
{
    Json j;
    json_init(&j, body, len, "request");
    if (json_peek(&j) != JSON_OBJECT) {
        if (j.failed) return json_bad(rq, &j);
        snprintf(rq->why, sizeof rq->why, "request: the body must be a JSON object, not %s",
                 len ? json_type_name(json_peek(&j)) : "empty");
        return -1;
    }
    json_enter(&j, '{');
    int r, have_messages = 0;
    while ((r = json_next(&j, '}')) > 0) {
        char key[128];
        size_t kl;
        if (json_key(&j, key, sizeof key - 1, &kl) < 0) return json_bad(rq, &j);
        key[kl] = '\0';
        double v;
        if (is_null(&j)) continue; /* null: as if absent */
        if (!strcmp(key, "messages")) {
            have_messages = 1;
            if (json_skip(&j) < 0) return json_bad(rq, &j);
        } else if (!strcmp(key, "prompt") && !rq->chat) {
            if (read_prompt(rq, &j, ra) < 0) return -1;
        } else if (!strcmp(key, "stream")) {
            if (read_bool(rq, &j, key, &rq->stream) < 0) return -1;
        } else if (!strcmp(key, "stream_options")) {
            if (read_stream_options(rq, &j) < 0) return -1;
        } else if (!strcmp(key, "max_tokens") || !strcmp(key, "max_completion_tokens") || !strcmp(key, "n_predict")) {
            if (read_number(rq, &j, key, -1, 1 << 24, 1, &v) < 0) return -1;
            rq->max_tokens = (int64_t)v;
        } else if (!strcmp(key, "temperature")) {
            if (read_number(rq, &j, key, 0, 100, 0, &v) < 0) return -1;
            rq->sp.temperature = (float)v;
            rq->set[0] = 1;
        } else if (!strcmp(key, "top_k")) {
            if (read_number(rq, &j, key, 0, 1 << 30, 1, &v) < 0) return -1;
            rq->sp.top_k = (int)v;
            rq->set[1] = 1;
        } else if (!strcmp(key, "top_p")) {
            if (read_number(rq, &j, key, 0, 1, 0, &v) < 0) return -1;
            rq->sp.top_p = v < 1e-6 ? 1e-6f : (float)v;
            rq->set[2] = 1;
        } else if (!strcmp(key, "min_p")) {
            if (read_number(rq, &j, key, 0, 1, 0, &v) < 0) return -1;
            rq->sp.min_p = (float)v;
            rq->set[3] = 1;
        } else if (!strcmp(key, "presence_penalty")) {
            if (read_number(rq, &j, key, -100, 100, 0, &v) < 0) return -1;
            rq->sp.presence_penalty = (float)v;
        } else if (!strcmp(key, "frequency_penalty")) {
            if (read_number(rq, &j, key, -100, 100, 0, &v) < 0) return -1;
            rq->sp.frequency_penalty = (float)v;
        } else if (!strcmp(key, "repeat_penalty")) {
            if (read_number(rq, &j, key, 1e-3, 100, 0, &v) < 0) return -1;
            rq->sp.repeat_penalty = (float)v;
        } else if (!strcmp(key, "repeat_last_n")) {
            if (read_number(rq, &j, key, 0, SAMPLER_MAX_HISTORY, 1, &v) < 0) return -1;
            rq->sp.repeat_last_n = (int)v;
        } else if (!strcmp(key, "seed")) {
            if (read_number(rq, &j, key, -9.2e18, 9.2e18, 1, &v) < 0) return -1;
            if (v >= 0) {
                rq->seed_set = 1;
                rq->seed = (uint64_t)v;
            }
        } else if (!strcmp(key, "response_format") || !strcmp(key, "tool_choice") || !strcmp(key, "tools")) {
            while (j.pos < j.len && strchr(" \t\r\n", j.src[j.pos])) j.pos++;
            size_t *slot = key[0] == 'r' ? &rq->response_format : !strcmp(key, "tools") ? &rq->tools : &rq->tool_choice;
            *slot = j.pos;
            if (json_skip(&j) < 0) return json_bad(rq, &j);
        } else if (!strcmp(key, "stop")) {
            if (read_stop(rq, &j, rp) < 0) return -1;
        } else if (!strcmp(key, "enable_thinking")) {
            if (read_bool(rq, &j, key, &rq->thinking) < 0) return -1;
        } else if (!strcmp(key, "chat_template_kwargs")) {
            if (read_kwargs(rq, &j) < 0) return -1;
        } else if (!strcmp(key, "n")) {
            if (read_number(rq, &j, key, 1, 1, 1, &v) < 0) return bad(rq, "n", "only n = 1 is supported");
        } else {
            /* model, tools (read with the messages), user, ...: not used here */
            if (json_skip(&j) < 0) return json_bad(rq, &j);
        }
    }
    if (r < 0 || json_end(&j) < 0) return json_bad(rq, &j);
    if (rq->chat && !have_messages) return bad(rq, "messages", "missing");
    if (!rq->chat && !rq->prompt) return bad(rq, "prompt", "missing");
    return 0;
}

/* ---- Writing the reply ---------------------------------------------------- */

static void chunk_open(Reply *rp)
{
    Server *sv = rp->sv;
    if (rp->rq->chat)
        server_outf(sv,
                    "data: {\"id\":\"chatcmpl-%llu\",\"object\":\"chat.completion.chunk\",\"created\":%lld,"
                    "\"model\":%s,\"choices\":[{\"index\":0,\"delta\":{",
                    (unsigned long long)rp->id, (long long)rp->created, model_json(sv));
    else
        server_outf(sv,
                    "data: {\"id\":\"cmpl-%llu\",\"object\":\"text_completion\",\"created\":%lld,\"model\":%s,"
                    "\"choices\":[{\"index\":0,",
                    (unsigned long long)rp->id, (long long)rp->created, model_json(sv));
    rp->chunk_open = 1;
}

/* Ends this token's chunk (streaming) and sends it. */
static void chunk_close(Reply *rp)
{
    Server *sv = rp->sv;
    if (!rp->chunk_open) return;
    if (rp->field) OUT_LIT(sv, "\"");
    if (rp->rq->chat) OUT_LIT(sv, "},\"finish_reason\":null}]}\n\n");
    else OUT_LIT(sv, ",\"logprobs\":null,\"finish_reason\":null}]}\n\n");
    rp->field = 0;
    rp->chunk_open = 0;
    server_out_flush(sv);
}

static void write_text(Reply *rp, int kind, const char *p, size_t n)
{
    Server *sv = rp->sv;
    int field = kind == SERVE_REASONING ? 2 : 1;
    if (rp->field != field) {
        int first = 1;
        if (rp->rq->stream && !rp->chunk_open) chunk_open(rp);
        else if (rp->field) {
            OUT_LIT(sv, "\"");
            first = 0;
        } else if (!rp->rq->stream) first = 0; /* after "role" */
        if (!first) OUT_LIT(sv, ",");
        if (!rp->rq->chat) OUT_LIT(sv, "\"text\":\"");
        else if (field == 2) OUT_LIT(sv, "\"reasoning_content\":\"");
        else OUT_LIT(sv, "\"content\":\"");
        rp->field = field;
    }
    if (field == 1) rp->any_content = 1;
    server_out_json_text(sv, p, n);
}

static void on_text(void *ctx, int kind, const char *p, size_t n)
{
    Reply *rp = ctx;
    if (kind == SERVE_CONTENT && rp->split_tools) tool_split_push(&rp->split, p, n);
    else write_text(rp, kind, p, n);
}

static void on_split_content(void *ctx, const char *p, size_t n)
{
    write_text(ctx, SERVE_CONTENT, p, n);
}

static void calls_put(Reply *rp, const char *p, size_t n)
{
    if (rp->calls_n + n <= rp->calls_cap) memcpy(rp->calls + rp->calls_n, p, n);
    rp->calls_n += n;
}

/* A tool call parsed from the reply: streamed as two deltas (id, type and
 * name; then the arguments), or kept for the message's tool_calls. */
/* Streamed: a piece of a call's arguments, one delta. */
static void on_tool_args(void *ctx, int index, const char *p, size_t n)
{
    Reply *rp = ctx;
    Server *sv = rp->sv;
    if (rp->chunk_open) chunk_close(rp);
    chunk_open(rp);
    server_outf(sv, "\"tool_calls\":[{\"index\":%d,\"function\":{\"arguments\":\"", index);
    server_out_json_text(sv, p, n);
    OUT_LIT(sv, "\"}}]},\"finish_reason\":null}]}\n\n");
    rp->chunk_open = 0;
    server_out_flush(sv);
}

/* A tool call parsed from the reply: streamed as a delta with id, type and
 * name, then its arguments (in one delta, or as they come: args NULL and
 * on_tool_args), or kept for the message's tool_calls. */
static void on_tool_call(void *ctx, int index, const char *name, size_t name_len, const char *args, size_t args_len)
{
    Reply *rp = ctx;
    Server *sv = rp->sv;
    char id[64];
    snprintf(id, sizeof id, "call_%llu_%d", (unsigned long long)rp->id, index);
    if (rp->rq->stream) {
        if (rp->chunk_open) chunk_close(rp);
        chunk_open(rp);
        server_outf(sv, "\"tool_calls\":[{\"index\":%d,\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"",
                    index, id);
        server_out_json_text(sv, name, name_len);
        OUT_LIT(sv, "\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n");
        rp->chunk_open = 0;
        if (args) on_tool_args(ctx, index, args, args_len);
        else server_out_flush(sv);
        return;
    }
    char head[160];
    int k = snprintf(head, sizeof head, "%s{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":", index ? "," : "", id);
    calls_put(rp, head, (size_t)k);
    size_t e = json_escape(name, name_len, NULL, 0);
    if (rp->calls_n + e + 1 <= rp->calls_cap) json_escape(name, name_len, rp->calls + rp->calls_n, e + 1);
    rp->calls_n += e;
    calls_put(rp, ",\"arguments\":", 13);
    e = json_escape(args, args_len, NULL, 0);
    if (rp->calls_n + e + 1 <= rp->calls_cap) json_escape(args, args_len, rp->calls + rp->calls_n, e + 1);
    rp->calls_n += e;
    calls_put(rp, "}}", 2);
}

static void write_usage(Server *sv, int n_prompt, int n_cached, int n_gen, double t_prompt, double t_gen)
{
    int n_filled = n_prompt - n_cached;
    server_outf(sv,
                "\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,"
                "\"prompt_tokens_details\":{\"cached_tokens\":%d}},",
                n_prompt, n_gen, n_prompt + n_gen, n_cached);
    server_outf(sv,
                "\"timings\":{\"cache_n\":%d,\"prompt_n\":%d,\"prompt_ms\":%.3f,\"prompt_per_second\":%.3f,"
                "\"predicted_n\":%d,\"predicted_ms\":%.3f,\"predicted_per_second\":%.3f}",
                n_cached, n_filled, t_prompt * 1e3, t_prompt > 0 ? n_filled / t_prompt : 0.0, n_gen, t_gen * 1e3,
                t_gen > 0 ? n_gen / t_gen : 0.0);
}

/* Each generated token: its text through the stop strings into the reply
 * (a chunk of its own when streaming). */
static int reply_token(Reply *rp, int32_t id)
{
    Server *sv = rp->sv;
    Session *s = sv->s;
    int len = token_stream_push(&rp->ts, &s->tok, id, s->piece, s->piece_cap);
    int stopped = len > 0 && serve_text_push(&rp->text, s->piece, (size_t)len);
    if (rp->rq->stream) chunk_close(rp);
    if (stopped) return REPLY_STOPPED;
    return sv->out_failed ? REPLY_GONE : 0;
}

/* ---- Slots ------------------------------------------------------------------
 * A request in a slot: its sequence (KV cache and the ids in it), its own
 * sampler state (seed, penalty history), its reply. Every step feeds the
 * next token of each decoding slot and a chunk of the prompts being
 * prefilled, all in one forward pass (forward_parts). */
typedef struct {
    int busy;
    Conn *c;
    SeqState *seq;
    int32_t *hist;             /* the ids in the cache, in order */
    Sampler sampler;           /* shares the session's scratch tables, owns its history */
    Grammar *grammar;          /* the slot's grammar state, or NULL (no response_format, no forced call) */
    Request rq;
    Reply rp;
    int n_prompt;              /* ids of the prompt, in hist */
    uint32_t n_cached;         /* of them, reused from the cache */
    int head_sent;             /* prefill is over: the reply has begun */
    int64_t n_predict;
    int n_gen;
    int32_t next;              /* generated, to be fed at the next step */
    double t0, t_prompt, tg0;
    size_t out_len;            /* its response buffer, sv->slot_out[i] */
    int out_failed;
    uint64_t order, last_used;
} Slot;

static Slot slots[SESSION_MAX_SLOTS];
static uint64_t slot_clock;

/* Points the server's output at slot i (server_out* write the active
 * connection's buffer). */
static void slot_enter(Server *sv, int i)
{
    Slot *sl = &slots[i];
    sv->active = sl->c;
    sv->out = sv->slot_out[i];
    sv->out_len = sl->out_len;
    sv->out_failed = sl->out_failed;
    sv->out_chunked = 1;
}

static void slot_leave(Server *sv, int i)
{
    Slot *sl = &slots[i];
    sl->out_len = sv->out_len;
    sl->out_failed = sv->out_failed;
    sv->active = NULL;
}

static void slot_free(Server *sv, int i)
{
    slots[i].busy = 0;
    slots[i].c = NULL;
    slots[i].last_used = ++slot_clock;
    sv->n_busy--;
}

/* The slot's reply ends here: the tail (finish_reason, usage), the log
 * line, the connection closed. gone: the client left; nothing is written. */
static void slot_finish(Server *sv, int i, const char *finish, int gone)
{
    Slot *sl = &slots[i];
    Session *s = sv->s;
    Request *rq = &sl->rq;
    Reply *rp = &sl->rp;
    HttpRequest *hr = &sl->c->req;
    int n = sl->n_prompt, k = (int)sl->n_cached, n_gen = sl->n_gen;
    double t_prompt = sl->t_prompt, t_gen = port_seconds() - sl->tg0;
    slot_enter(sv, i);
    gone = gone || sv->out_failed || sl->c->gone;
    if (!gone) {
        int len = token_stream_flush(&rp->ts, s->piece, s->piece_cap);
        if (len > 0) serve_text_push(&rp->text, s->piece, (size_t)len);
        serve_text_finish(&rp->text);
        if (rp->split_tools) {
            tool_split_finish(&rp->split);
            if (rp->split.n_calls > rp->split.n_bad && !strcmp(finish, "stop")) finish = "tool_calls";
        }
        if (rq->stream) {
            chunk_close(rp);
            chunk_open(rp);
            if (rq->chat) server_outf(sv, "},\"finish_reason\":\"%s\"}],", finish);
            else server_outf(sv, "\"text\":\"\",\"logprobs\":null,\"finish_reason\":\"%s\"}],", finish);
            write_usage(sv, n, k, n_gen, t_prompt, t_gen);
            OUT_LIT(sv, "}\n\n");
            rp->chunk_open = 0;
            if (rq->include_usage) {
                server_outf(sv,
                            "data: {\"id\":\"%s-%llu\",\"object\":\"%s\",\"created\":%lld,\"model\":%s,\"choices\":[],",
                            rq->chat ? "chatcmpl" : "cmpl", (unsigned long long)rp->id,
                            rq->chat ? "chat.completion.chunk" : "text_completion", (long long)rp->created,
                            model_json(sv));
                write_usage(sv, n, k, n_gen, t_prompt, t_gen);
                OUT_LIT(sv, "}\n\n");
            }
            OUT_LIT(sv, "data: [DONE]\n\n");
        } else {
            if (rp->field) OUT_LIT(sv, "\"");
            if (rq->chat) {
                int calls = rp->split_tools && rp->split.n_calls > 0;
                if (!rp->any_content) {
                    if (calls) OUT_LIT(sv, ",\"content\":null");
                    else OUT_LIT(sv, ",\"content\":\"\"");
                }
                if (calls && rp->calls_n <= rp->calls_cap) {
                    OUT_LIT(sv, ",\"tool_calls\":[");
                    server_out(sv, rp->calls, rp->calls_n);
                    OUT_LIT(sv, "]");
                }
                server_outf(sv, "},\"finish_reason\":\"%s\"}],", finish);
            } else {
                server_outf(sv, ",\"logprobs\":null,\"finish_reason\":\"%s\"}],", finish);
            }
            write_usage(sv, n, k, n_gen, t_prompt, t_gen);
            OUT_LIT(sv, "}\n");
        }
        server_out_end(sv);
        if (!sv->out_failed) sv->n_done++;
    }
    port_err("serve: %s %.*s: prompt %d tokens (%u cached) in %.3f s, %d generated in %.3f s (%.1f tokens/s), %s\n",
             rq->stream ? "stream" : "json", (int)hr->path_len, hr->path, n, sl->n_cached, t_prompt, n_gen, t_gen,
             t_gen > 0 ? n_gen / t_gen : 0.0, gone || sv->out_failed ? "client gone" : finish);
    Conn *c = sl->c;
    slot_leave(sv, i);
    server_close(sv, c, 1);
    slot_free(sv, i);
}

/* A request the model cannot answer (a forward error, non-finite logits):
 * 500 before the reply has begun, else the stream ends with the reason;
 * the slot's sequence is emptied so no later request reuses it. */
static void slot_fail(Server *sv, int i, const char *why)
{
    Slot *sl = &slots[i];
    Conn *c = sl->c;
    HttpRequest *hr = &c->req;
    seq_reset(sl->seq);
    if (!sl->head_sent) {
        server_error(sv, c, 500, "internal_error", "%s", why);
        port_err("serve: %.*s: %s\n", (int)hr->path_len, hr->path, why);
    } else {
        port_err("serve: %.*s: %s\n", (int)hr->path_len, hr->path, why);
        slot_enter(sv, i);
        if (sl->rq.stream && !sv->out_failed) {
            chunk_close(&sl->rp);
            OUT_LIT(sv, "data: {\"error\":{\"message\":\"");
            server_out_json_text(sv, why, strlen(why));
            OUT_LIT(sv, "\",\"type\":\"server_error\",\"code\":\"internal_error\"}}\n\n");
        }
        server_out_end(sv);
        slot_leave(sv, i);
        server_close(sv, c, 1);
    }
    slot_free(sv, i);
}

/* The prompt is in: the reply begins. */
static void slot_begin_reply(Server *sv, int i)
{
    Slot *sl = &slots[i];
    Request *rq = &sl->rq;
    Reply *rp = &sl->rp;
    sl->t_prompt = port_seconds() - sl->t0;
    sl->head_sent = 1;
    sl->out_len = 0;
    sl->out_failed = 0;
    sv->active = sl->c;
    server_out_head(sv, sl->c, rq->stream ? "text/event-stream" : "application/json");
    sl->out_failed = sv->out_failed;
    slot_enter(sv, i);
    if (rq->stream && rq->chat) {
        chunk_open(rp);
        OUT_LIT(sv, "\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n");
        rp->chunk_open = 0;
        server_out_flush(sv);
    } else if (!rq->stream) {
        if (rq->chat)
            server_outf(sv,
                        "{\"id\":\"chatcmpl-%llu\",\"object\":\"chat.completion\",\"created\":%lld,\"model\":%s,"
                        "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\"",
                        (unsigned long long)rp->id, (long long)rp->created, model_json(sv));
        else {
            server_outf(sv,
                        "{\"id\":\"cmpl-%llu\",\"object\":\"text_completion\",\"created\":%lld,\"model\":%s,"
                        "\"choices\":[{\"index\":0,\"text\":\"",
                        (unsigned long long)rp->id, (long long)rp->created, model_json(sv));
            rp->field = 1;
        }
    }
    slot_leave(sv, i);
    token_stream_init(&rp->ts);
    sl->tg0 = port_seconds();
}

/* The logits of the slot's last fed token: sample, write, and either
 * finish or keep the token for the next step. */
static void slot_logits(Server *sv, int i, float *logits, const SessionScan *sc)
{
    Slot *sl = &slots[i];
    Session *s = sv->s;
    if (session_check_scan(s, sc, sl->seq) != 0) {
        slot_fail(sv, i, s->err);
        return;
    }
    if (!sl->head_sent) slot_begin_reply(sv, i);
    /* as session_generate: max_tokens, then a full context ("length":
     * serve never shifts the context) */
    if (sl->n_gen >= sl->n_predict || sl->seq->n_past >= s->mopt.n_ctx) {
        slot_finish(sv, i, "length", 0);
        return;
    }
    int32_t id;
    if (session_sample_scan(s, &sl->sampler, sl->grammar, logits, sc, &id) != 0) {
        slot_fail(sv, i, s->err);
        return;
    }
    if (tokenizer_is_eog(&s->tok, id)) {
        slot_finish(sv, i, "stop", 0);
        return;
    }
    sl->n_gen++;
    sv->n_gen_tokens++;
    slot_enter(sv, i);
    int code = reply_token(&sl->rp, id);
    slot_leave(sv, i);
    if (code == REPLY_STOPPED) slot_finish(sv, i, "stop", 0);
    else if (code == REPLY_GONE) slot_finish(sv, i, "stop", 1);
    else if (sl->n_gen >= sl->n_predict) slot_finish(sv, i, "length", 0);
    else sl->next = id;
}

/* One step: the next token of every decoding slot, then prompt chunks of
 * the slots still prefilling (oldest first) in what is left of the batch,
 * so a long prompt holds the running replies for one step at most. */
void api_step(Server *sv)
{
    Session *s = sv->s;
    ForwardPart parts[SESSION_MAX_SLOTS];
    int who[SESSION_MAX_SLOTS], np = 0;
    for (int i = 0; i < sv->n_slots; i++) {
        Slot *sl = &slots[i];
        if (sl->busy && (sl->c->gone || sl->out_failed)) slot_finish(sv, i, "stop", 1);
    }
    int used = 0, budget = (int)s->ws.batch;
    for (int i = 0; i < sv->n_slots; i++) {
        Slot *sl = &slots[i];
        if (!sl->busy || !sl->head_sent) continue;
        sl->hist[sl->seq->n_past] = sl->next;
        parts[np] = (ForwardPart){sl->seq, &sl->hist[sl->seq->n_past], 1, sl->seq->n_past, FORWARD_LOGITS_LAST, -1};
        who[np++] = i;
        used++;
    }
    for (;;) {
        int best = -1;
        for (int i = 0; i < sv->n_slots; i++) {
            Slot *sl = &slots[i];
            int taken = 0;
            for (int p = 0; p < np; p++) taken |= who[p] == i;
            if (sl->busy && !sl->head_sent && !taken && (best < 0 || sl->order < slots[best].order)) best = i;
        }
        if (best < 0 || used >= budget) break;
        Slot *sl = &slots[best];
        int left = sl->n_prompt - (int)sl->seq->n_past, n = left < budget - used ? left : budget - used;
        parts[np] = (ForwardPart){sl->seq, &sl->hist[sl->seq->n_past], n, sl->seq->n_past,
                                  n == left ? FORWARD_LOGITS_LAST : FORWARD_LOGITS_NONE, -1};
        who[np++] = best;
        used += n;
        sv->n_prompt_tokens += (uint64_t)n;
    }
    if (np == 0) return;
    double t0 = port_seconds();
    int rc = forward_parts(&s->model, &s->ws, parts, np);
    sv->step_seconds += port_seconds() - t0;
    sv->n_steps++;
    if (rc != 0) {
        char why[sizeof s->ws.err + 256];
        snprintf(why, sizeof why, "%s: %s", s->opt.model_path, s->ws.err);
        for (int p = 0; p < np; p++) slot_fail(sv, who[p], why);
        return;
    }
    SessionScan scan[SESSION_MAX_SLOTS];
    session_scan_rows(s, s->ws.logits, (int)s->ws.n_logits, scan);
    for (int p = 0; p < np; p++) {
        int r = parts[p].logits_row;
        if (r >= 0) slot_logits(sv, who[p], s->ws.logits + (uint64_t)r * s->cfg.n_vocab, &scan[r]);
    }
}

/* The free slot whose cache the request continues (the same conversation
 * going on: the common prefix is at least half of what the slot holds),
 * the longest such prefix first; else an empty slot; else the one unused
 * longest. *common: the prefix it shares with ids, reused. */
static int slot_choose(Server *sv, const int32_t *ids, int n, uint32_t *common)
{
    int best = -1, other = -1;
    uint32_t best_k = 0, prefix[SESSION_MAX_SLOTS];
    for (int i = 0; i < sv->n_slots; i++) {
        Slot *sl = &slots[i];
        if (sl->busy) continue;
        const int32_t *hist = sv->s->slot_history[i];
        uint32_t k = 0, past = sv->s->slot_seq[i]->n_past;
        while (k < past && k < (uint32_t)n && hist[k] == ids[k]) k++;
        prefix[i] = k;
        if (k > 0 && 2 * k >= past && k > best_k) {
            best = i;
            best_k = k;
        }
        if (other < 0) other = i;
        else {
            uint32_t po = sv->s->slot_seq[other]->n_past;
            if ((past == 0 && po > 0) || ((past == 0) == (po == 0) && sl->last_used < slots[other].last_used)) other = i;
        }
    }
    if (best < 0) best = other;
    *common = best >= 0 ? prefix[best] : 0;
    return best;
}

/* ---- Endpoints ------------------------------------------------------------- */

/* GET /slots: each slot's state and the positions its cache holds. */
static void api_slots(Server *sv, Conn *c)
{
    char body[SESSION_MAX_SLOTS * 160 + 64];
    size_t n = 0;
    n += (size_t)snprintf(body + n, sizeof body - n, "[");
    for (int i = 0; i < sv->n_slots; i++) {
        const Slot *sl = &slots[i];
        const SeqState *q = sv->s->slot_seq[i];
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"id\":%d,\"state\":\"%s\",\"n_ctx\":%u,\"n_past\":%u,\"n_prompt\":%d,"
                              "\"n_cached\":%u,\"n_generated\":%d}",
                              i ? "," : "", i, !sl->busy ? "idle" : sl->head_sent ? "generating" : "prompt", q->n_ctx,
                              q->n_past, sl->busy ? sl->n_prompt : 0, sl->busy ? sl->n_cached : 0,
                              sl->busy ? sl->n_gen : 0);
    }
    n += (size_t)snprintf(body + n, sizeof body - n, "]\n");
    server_respond(sv, c, 200, "application/json", body, n < sizeof body ? n : 0);
}

/* GET /metrics (--metrics): the Prometheus text format. */
static void api_metrics(Server *sv, Conn *c)
{
    char body[4096];
    uint64_t kv_used = 0, kv_total = 0;
    int busy = 0;
    for (int i = 0; i < sv->n_slots; i++) {
        kv_used += sv->s->slot_seq[i]->n_past;
        kv_total += sv->s->slot_seq[i]->n_ctx;
        busy += slots[i].busy;
    }
    double up = port_seconds() - sv->started;
    int n = snprintf(
        body, sizeof body,
        "# HELP pith_requests_total Generation requests taken into a slot.\n# TYPE pith_requests_total counter\n"
        "pith_requests_total %llu\n"
        "# HELP pith_requests_completed_total Replies sent in full.\n# TYPE pith_requests_completed_total counter\n"
        "pith_requests_completed_total %llu\n"
        "# HELP pith_prompt_tokens_total Prompt tokens fed (cached ones not counted).\n"
        "# TYPE pith_prompt_tokens_total counter\npith_prompt_tokens_total %llu\n"
        "# HELP pith_prompt_tokens_cached_total Prompt tokens reused from a slot's cache.\n"
        "# TYPE pith_prompt_tokens_cached_total counter\npith_prompt_tokens_cached_total %llu\n"
        "# HELP pith_tokens_generated_total Tokens generated.\n# TYPE pith_tokens_generated_total counter\n"
        "pith_tokens_generated_total %llu\n"
        "# HELP pith_tokens_generated_per_second Tokens generated per second of forward steps.\n"
        "# TYPE pith_tokens_generated_per_second gauge\npith_tokens_generated_per_second %.3f\n"
        "# HELP pith_forward_steps_total Batched forward steps.\n# TYPE pith_forward_steps_total counter\n"
        "pith_forward_steps_total %llu\n"
        "# HELP pith_forward_seconds_total Seconds spent in forward steps.\n# TYPE pith_forward_seconds_total counter\n"
        "pith_forward_seconds_total %.3f\n"
        "# HELP pith_slots Slots.\n# TYPE pith_slots gauge\npith_slots %d\n"
        "# HELP pith_slots_busy Slots holding a request.\n# TYPE pith_slots_busy gauge\npith_slots_busy %d\n"
        "# HELP pith_queue_length Requests waiting for a slot.\n# TYPE pith_queue_length gauge\n"
        "pith_queue_length %d\n"
        "# HELP pith_kv_cache_used_positions Positions held in the slots' KV caches.\n"
        "# TYPE pith_kv_cache_used_positions gauge\npith_kv_cache_used_positions %llu\n"
        "# HELP pith_kv_cache_positions Positions the slots' KV caches can hold.\n"
        "# TYPE pith_kv_cache_positions gauge\npith_kv_cache_positions %llu\n"
        "# HELP pith_kv_cache_usage_ratio Used positions over all positions.\n"
        "# TYPE pith_kv_cache_usage_ratio gauge\npith_kv_cache_usage_ratio %.4f\n"
        "# HELP pith_uptime_seconds Seconds since the server started.\n# TYPE pith_uptime_seconds gauge\n"
        "pith_uptime_seconds %.1f\n",
        (unsigned long long)sv->n_requests_slotted, (unsigned long long)sv->n_done,
        (unsigned long long)sv->n_prompt_tokens, (unsigned long long)sv->n_cached_tokens,
        (unsigned long long)sv->n_gen_tokens, sv->step_seconds > 0 ? (double)sv->n_gen_tokens / sv->step_seconds : 0.0,
        (unsigned long long)sv->n_steps, sv->step_seconds, sv->n_slots, busy, server_queued(sv),
        (unsigned long long)kv_used, (unsigned long long)kv_total, kv_total ? (double)kv_used / (double)kv_total : 0.0,
        up);
    server_respond(sv, c, 200, "text/plain; version=0.0.4", body, n > 0 && (size_t)n < sizeof body ? (size_t)n : 0);
}

void api_dispatch(Server *sv, Conn *c)
{
    HttpRequest *r = &c->req;
    if (http_path_is(r->path, r->path_len, "/health")) {
        static const char ok[] = "{\"status\":\"ok\"}\n";
        server_respond(sv, c, 200, "application/json", ok, sizeof ok - 1);
    } else if (http_path_is(r->path, r->path_len, "/v1/models") || http_path_is(r->path, r->path_len, "/models")) {
        char body[2048];
        int n = snprintf(body, sizeof body,
                         "{\"object\":\"list\",\"data\":[{\"id\":%s,\"object\":\"model\",\"created\":%lld,"
                         "\"owned_by\":\"pith\",\"meta\":{\"n_ctx\":%u,\"n_vocab\":%u}}]}\n",
                         model_json(sv), (long long)port_wall_seconds(), sv->s->mopt.n_ctx, sv->s->cfg.n_vocab);
        server_respond(sv, c, 200, "application/json", body, n > 0 && (size_t)n < sizeof body ? (size_t)n : 0);
    } else if (http_path_is(r->path, r->path_len, "/slots")) {
        api_slots(sv, c);
    } else if (http_path_is(r->path, r->path_len, "/metrics")) {
        api_metrics(sv, c);
    }
    /* generation requests stay queued for server_run */
}

void api_generate(Server *sv, Conn *c)
{
    Session *s = sv->s;
    static Request rq;
    static Reply rp;
    memset(&rq, 0, sizeof rq);
    memset(&rp, 0, sizeof rp);
    HttpRequest *hr = &c->req;
    rq.chat = http_path_is(hr->path, hr->path_len, "/v1/chat/completions") ||
              http_path_is(hr->path, hr->path_len, "/chat/completions");
    rq.thinking = s->opt.thinking;
    rq.max_tokens = -1;
    rq.sp = sv->cli_sampling;
    rq.response_format = rq.tool_choice = rq.tools = API_ABSENT;
    rp.sv = sv;
    rp.rq = &rq;
    rp.id = ++sv->n_requests;
    rp.created = port_wall_seconds();
    serve_text_init(&rp.text, 0, on_text, &rp);

    const char *body = c->buf + hr->head_len;
    size_t body_len = (size_t)hr->content_length;
    Arena ra;
    arena_init(&ra, sv->region, sv->region_size);
    if (read_request(&rq, &rp, body, body_len, &ra) != 0) {
        server_error(sv, c, 400, "invalid_request", "%s", rq.why);
        return;
    }
    /* response_format and tools: a grammar, and the tool-call splitter */
    ApiConstraint ac;
    if (api_constraint(body, body_len, rq.response_format, rq.chat ? rq.tool_choice : API_ABSENT,
                       rq.chat ? rq.tools : API_ABSENT, s->tmpl, s->grammar_text, SESSION_GRAMMAR_TEXT + 1, &ac, rq.why,
                       sizeof rq.why) != 0) {
        server_error(sv, c, 400, "invalid_request", "%s", rq.why);
        return;
    }
    /* held from the first token: no thinking block (the grammar is compiled
     * into the slot's state once the slot is chosen) */
    if (ac.grammar_len) rq.thinking = 0;
    serve_text_think(&rp.text, !rq.chat ? 0 : rq.thinking && chat_template_opens_think(s->tmpl) ? 2 : 1);

    /* Sampling: Qwen3's defaults for the thinking mode, what the command
     * line set, what the request sets. */
    SamplerParams sp;
    sampler_defaults(rq.thinking, &sp);
    for (int i = 0; i < 4; i++) {
        const SamplerParams *from = rq.set[i] ? &rq.sp : sv->opt.sampling_cli[i] ? &sv->cli_sampling : &sp;
        if (i == 0) sp.temperature = from->temperature;
        if (i == 1) sp.top_k = from->top_k;
        if (i == 2) sp.top_p = from->top_p;
        if (i == 3) sp.min_p = from->min_p;
    }
    sp.repeat_penalty = rq.sp.repeat_penalty;
    sp.repeat_last_n = rq.sp.repeat_last_n;
    sp.presence_penalty = rq.sp.presence_penalty;
    sp.frequency_penalty = rq.sp.frequency_penalty;
    if (rq.seed_set) sp.seed = rq.seed;
    else if (s->opt.seed >= 0) sp.seed = (uint64_t)s->opt.seed;
    else {
        double t = port_seconds();
        uint64_t bits;
        memcpy(&bits, &t, sizeof bits);
        sp.seed = bits ^ (bits >> 29) ^ (rp.id * 0x9e3779b97f4a7c15ull);
    }
    char why[256];
    if (sampler_params_check(&sp, why, sizeof why) != 0) {
        server_error(sv, c, 400, "invalid_request", "%s", why);
        return;
    }

    /* The prompt text. */
    const char *text;
    size_t text_len;
    int raw = !rq.chat || s->tmpl == CHAT_TEMPLATE_RAW;
    if (rq.chat) {
        ChatJsonSizes sizes;
        char err[400];
        if (chat_json_read(body, body_len, "request", NULL, &sizes, err, sizeof err) != 0) {
            server_error(sv, c, 400, "invalid_request", "%s", err);
            return;
        }
        ChatJsonOut out;
        if (chat_json_out_take(&out, &ra, &sizes) != 0) {
            server_error(sv, c, 500, "internal_error", "the request scratch is too small (a planning bug)");
            return;
        }
        if (chat_json_read(body, body_len, "request", &out, &sizes, err, sizeof err) != 0) {
            server_error(sv, c, 400, "invalid_request", "%s", err);
            return;
        }
        if (sizes.n_messages == 0) {
            server_error(sv, c, 400, "invalid_request", "messages: the array is empty");
            return;
        }
        ChatOptions co;
        memset(&co, 0, sizeof co);
        co.add_generation_prompt = 1;
        co.enable_thinking = rq.thinking;
        if (ac.render) {
            co.tools = out.tools;
            co.tools_len = out.tools_len;
            co.n_tools = (int)sizes.n_tools;
        }
        int64_t len = chat_render(s->tmpl, out.msgs, (int)sizes.n_messages, &co, NULL, 0);
        if (len < 0) {
            server_error(sv, c, 400, "invalid_request", "messages: the conversation cannot be rendered");
            return;
        }
        if ((uint64_t)len > s->tok.max_text) {
            server_error(sv, c, 400, "context_length_exceeded",
                         "the rendered prompt of %lld bytes is longer than the %llu bytes this server reads for a "
                         "context of %u tokens",
                         (long long)len, (unsigned long long)s->tok.max_text, s->mopt.n_ctx);
            return;
        }
        char *buf = arena_take(&ra, (uint64_t)len + 1);
        if (!buf) {
            server_error(sv, c, 500, "internal_error", "the request scratch is too small (a planning bug)");
            return;
        }
        chat_render(s->tmpl, out.msgs, (int)sizes.n_messages, &co, buf, (size_t)len + 1);
        text = buf;
        text_len = (size_t)len;
    } else {
        text = rq.prompt;
        text_len = rq.prompt_len;
        if (text_len > s->tok.max_text) {
            server_error(sv, c, 400, "context_length_exceeded",
                         "the prompt of %zu bytes is longer than the %llu bytes this server reads for a context of %u "
                         "tokens",
                         text_len, (unsigned long long)s->tok.max_text, s->mopt.n_ctx);
            return;
        }
    }

    /* Token ids, as `pith run` makes them: the template's text as is, or
     * a raw prompt with BOS first when the model asks for it. */
    int n = raw ? tokenizer_encode_prompt(&s->tok, text, text_len, s->ids, s->max_ids)
                : tokenizer_encode(&s->tok, text, text_len, 1, s->ids, s->max_ids);
    if (n < 0) {
        server_error(sv, c, 400, "context_length_exceeded", "the prompt does not fit the planned token buffer");
        return;
    }
    if (n == 0) {
        server_error(sv, c, 400, "invalid_request", "the prompt has no tokens");
        return;
    }
    uint32_t n_ctx = s->mopt.n_ctx;
    if ((uint64_t)n >= n_ctx) {
        server_error(sv, c, 400, "context_length_exceeded",
                     "the prompt has %d tokens; the context holds %u (-c), with room for at least one more", n, n_ctx);
        return;
    }

    /* Prefix reuse: the slot whose cache holds the longest prefix of these
     * ids takes the request, and only what differs is prefilled, in chunks
     * between the other slots' tokens (api_step). */
    uint32_t k;
    int i = slot_choose(sv, s->ids, n, &k);
    if (i < 0) { /* server_run hands a request over only with a slot free */
        server_error(sv, c, 503, "busy", "no free slot");
        return;
    }
    if (k == (uint32_t)n) k--; /* the last id is fed again, for its logits */
    if (!seq_can_resume(&s->cfg, s->slot_seq[i], k)) k = 0; /* the rings lost the window before k: from the start */
    /* response_format or forced tool calls: the slot's own grammar state */
    if (ac.grammar_len && session_slot_grammar(s, (uint32_t)i, s->grammar_text, ac.grammar_len, ac.what) != 0) {
        server_error(sv, c, 400, "invalid_request", "%s", s->err);
        return;
    }
    Slot *sl = &slots[i];
    memset(sl, 0, offsetof(Slot, last_used));
    sl->busy = 1;
    sl->c = c;
    sl->seq = s->slot_seq[i];
    sl->hist = s->slot_history[i];
    sl->rq = rq;
    sl->rp = rp;
    sl->rp.rq = &sl->rq;
    sl->rp.text.ctx = &sl->rp;
    sl->grammar = ac.grammar_len ? s->slot_grammar[i] : NULL;
    if (ac.parse) {
        /* the slot's tool-call buffers: the request scratch is the next request's */
        sl->rp.calls = sv->slot_tools[i] + TOOL_BLOCK_CAP;
        sl->rp.calls_cap = TOOL_CALLS_CAP;
        tool_split_init(&sl->rp.split, ac.format, sv->slot_tools[i], TOOL_BLOCK_CAP, on_split_content, on_tool_call, &sl->rp);
        if (ac.format == TOOL_FORMAT_XML)
            tool_split_schemas(&sl->rp.split, body, body_len, rq.tools, sl->rp.calls + TOOL_CALLS_CAP, TOOL_KINDS_CAP);
        /* streamed: forced calls' arguments as they come (they cannot fall
         * back to content), and Qwen3.5's as they become certain */
        if (rq.stream) tool_split_progressive(&sl->rp.split, on_tool_args, ac.forced);
        sl->rp.split_tools = 1;
    }
    sl->order = ++slot_clock;
    sl->t0 = sl->tg0 = port_seconds();
    sl->n_prompt = n;
    sl->n_cached = k;
    memcpy(sl->hist + k, s->ids + k, (size_t)(n - (int)k) * sizeof(int32_t));
    sl->seq->n_past = k;
    /* its own sampler: the session's scratch tables, its own history */
    sl->sampler = s->sampler;
    sl->sampler.history = s->slot_sampler_history[i];
    sl->sampler.params = sp;
    sampler_reset(&sl->sampler);
    for (int t = 0; t < n; t++) sampler_accept(&sl->sampler, s->ids[t]);
    sl->n_predict = (int64_t)n_ctx - n;
    if (rq.max_tokens >= 0 && rq.max_tokens < sl->n_predict) sl->n_predict = rq.max_tokens;
    sv->n_busy++;
    sv->n_requests_slotted++;
    sv->n_cached_tokens += k;
}

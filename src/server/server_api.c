/* The OpenAI-compatible endpoints of `pith serve`: requests read from
 * JSON, prompts rendered with the model's chat template, generation with
 * prefix reuse, and replies written as JSON or server-sent events while
 * they are generated. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "../text/chat.h"
#include "../text/json.h"
#include "server_api.h"
#include "server_tools.h"

#define TOOL_BLOCK_CAP (64 * 1024) /* one <tool_call> block of a reply */
#define TOOL_CALLS_CAP (128 * 1024) /* the tool_calls array of a whole reply */

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
        chunk_open(rp);
        server_outf(sv, "\"tool_calls\":[{\"index\":%d,\"function\":{\"arguments\":\"", index);
        server_out_json_text(sv, args, args_len);
        OUT_LIT(sv, "\"}}]},\"finish_reason\":null}]}\n\n");
        rp->chunk_open = 0;
        server_out_flush(sv);
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
 * (a chunk of its own when streaming); other clients are served between
 * tokens, and ours leaving stops the generation. */
static int reply_token(void *ctx, int32_t id)
{
    Reply *rp = ctx;
    Server *sv = rp->sv;
    Session *s = sv->s;
    int len = token_stream_push(&rp->ts, &s->tok, id, s->piece, s->piece_cap);
    int stopped = len > 0 && serve_text_push(&rp->text, s->piece, (size_t)len);
    if (rp->rq->stream) chunk_close(rp);
    if (stopped) return REPLY_STOPPED;
    server_service(sv, 0); /* other clients: read, queue, answer; notice ours leaving */
    return sv->out_failed ? REPLY_GONE : 0;
}

/* ---- Endpoints ------------------------------------------------------------- */

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
    session_clear_grammar(s);
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
    if (ac.grammar_len) {
        /* held from the first token: no thinking block */
        rq.thinking = 0;
        if (session_set_grammar(s, s->grammar_text, ac.grammar_len, ac.what) != 0) {
            server_error(sv, c, 400, "invalid_request", "%s", s->err);
            return;
        }
    }
    if (ac.parse) {
        char *block = arena_take(&ra, TOOL_BLOCK_CAP);
        rp.calls = arena_take(&ra, TOOL_CALLS_CAP);
        rp.calls_cap = TOOL_CALLS_CAP;
        if (!block || !rp.calls) {
            session_clear_grammar(s);
            server_error(sv, c, 500, "internal_error", "the request scratch is too small for tool calls (--max-body)");
            return;
        }
        tool_split_init(&rp.split, block, TOOL_BLOCK_CAP, on_split_content, on_tool_call, &rp);
        rp.split_tools = 1;
    }
    serve_text_think(&rp.text, rq.chat);

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

    /* Prefix reuse: the cache keeps the ids of the previous request; only
     * what differs is prefilled. A failure (a forward error, non-finite
     * logits from broken weights) is this request's: 500, the sequence is
     * emptied (nothing poisoned is reused) and the server goes on. */
    session_set_sampling(s, &sp);
    uint32_t k = 0;
    double t0 = port_seconds();
    if (session_prefill_reuse(s, s->ids, n, &k) != 0 || session_check_logits(s) != 0) {
        server_error(sv, c, 500, "internal_error", "%s", s->err);
        port_err("serve: %.*s: %s\n", (int)hr->path_len, hr->path, s->err);
        return;
    }
    double t_prompt = port_seconds() - t0;

    int64_t n_predict = (int64_t)n_ctx - n;
    if (rq.max_tokens >= 0 && rq.max_tokens < n_predict) n_predict = rq.max_tokens;

    /* The reply. */
    server_out_head(sv, c, rq.stream ? "text/event-stream" : "application/json");
    if (rq.stream && rq.chat) {
        chunk_open(&rp);
        OUT_LIT(sv, "\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n");
        rp.chunk_open = 0;
        server_out_flush(sv);
    } else if (!rq.stream) {
        if (rq.chat)
            server_outf(sv,
                        "{\"id\":\"chatcmpl-%llu\",\"object\":\"chat.completion\",\"created\":%lld,\"model\":%s,"
                        "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\"",
                        (unsigned long long)rp.id, (long long)rp.created, model_json(sv));
        else {
            server_outf(sv,
                        "{\"id\":\"cmpl-%llu\",\"object\":\"text_completion\",\"created\":%lld,\"model\":%s,"
                        "\"choices\":[{\"index\":0,\"text\":\"",
                        (unsigned long long)rp.id, (long long)rp.created, model_json(sv));
            rp.field = 1;
        }
    }

    /* A full context ends the reply with "length" (serve sets --no-shift). */
    token_stream_init(&rp.ts);
    GenOptions g = {n_predict, 0, reply_token, NULL, &rp};
    GenResult gr;
    double tg0 = port_seconds();
    int failed = session_generate(s, &g, &gr) != 0;
    session_clear_grammar(s);
    int gone = gr.stop == GEN_CALLER && gr.caller_code == REPLY_GONE;
    const char *finish = gr.stop == GEN_EOG || (gr.stop == GEN_CALLER && gr.caller_code == REPLY_STOPPED) ? "stop" : "length";
    int n_gen = gr.n_gen;
    if (failed) {
        /* The head is sent: the reply ends here, unfinished, with the reason
         * in the log; the connection closes and the server goes on. */
        port_err("serve: %.*s: %s\n", (int)hr->path_len, hr->path, s->err);
        if (rq.stream && !sv->out_failed) {
            chunk_close(&rp);
            OUT_LIT(sv, "data: {\"error\":{\"message\":\"");
            server_out_json_text(sv, s->err, strlen(s->err));
            OUT_LIT(sv, "\",\"type\":\"server_error\",\"code\":\"internal_error\"}}\n\n");
        }
        server_out_end(sv);
        return;
    }
    double t_gen = port_seconds() - tg0;
    if (!gone) {
        int len = token_stream_flush(&rp.ts, s->piece, s->piece_cap);
        if (len > 0) serve_text_push(&rp.text, s->piece, (size_t)len);
        serve_text_finish(&rp.text);
        if (rp.split_tools) {
            tool_split_finish(&rp.split);
            if (rp.split.n_calls > 0 && !strcmp(finish, "stop")) finish = "tool_calls";
        }
        if (rq.stream) {
            chunk_close(&rp);
            chunk_open(&rp);
            if (rq.chat) server_outf(sv, "},\"finish_reason\":\"%s\"}],", finish);
            else server_outf(sv, "\"text\":\"\",\"logprobs\":null,\"finish_reason\":\"%s\"}],", finish);
            write_usage(sv, n, (int)k, n_gen, t_prompt, t_gen);
            OUT_LIT(sv, "}\n\n");
            rp.chunk_open = 0;
            if (rq.include_usage) {
                server_outf(sv,
                            "data: {\"id\":\"%s-%llu\",\"object\":\"%s\",\"created\":%lld,\"model\":%s,\"choices\":[],",
                            rq.chat ? "chatcmpl" : "cmpl", (unsigned long long)rp.id,
                            rq.chat ? "chat.completion.chunk" : "text_completion", (long long)rp.created,
                            model_json(sv));
                write_usage(sv, n, (int)k, n_gen, t_prompt, t_gen);
                OUT_LIT(sv, "}\n\n");
            }
            OUT_LIT(sv, "data: [DONE]\n\n");
        } else {
            if (rp.field) OUT_LIT(sv, "\"");
            if (rq.chat) {
                int calls = rp.split_tools && rp.split.n_calls > 0;
                if (!rp.any_content) {
                    if (calls) OUT_LIT(sv, ",\"content\":null");
                    else OUT_LIT(sv, ",\"content\":\"\"");
                }
                if (calls && rp.calls_n <= rp.calls_cap) {
                    OUT_LIT(sv, ",\"tool_calls\":[");
                    server_out(sv, rp.calls, rp.calls_n);
                    OUT_LIT(sv, "]");
                }
                server_outf(sv, "},\"finish_reason\":\"%s\"}],", finish);
            } else {
                server_outf(sv, ",\"logprobs\":null,\"finish_reason\":\"%s\"}],", finish);
            }
            write_usage(sv, n, (int)k, n_gen, t_prompt, t_gen);
            OUT_LIT(sv, "}\n");
        }
        server_out_end(sv);
    }
    port_err("serve: %s %.*s: prompt %d tokens (%u cached) in %.3f s, %d generated in %.3f s (%.1f tokens/s), %s\n",
             rq.stream ? "stream" : "json", (int)hr->path_len, hr->path, n, k, t_prompt, n_gen, t_gen,
             t_gen > 0 ? n_gen / t_gen : 0.0, gone || sv->out_failed ? "client gone" : finish);
}

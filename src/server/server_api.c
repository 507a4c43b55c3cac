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
#include "../text/tool_calls.h"
#include "server_api.h"

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
    size_t response_format;  /* offsets in the body, or TOOL_ABSENT */
    size_t tool_choice;
    size_t tools, tools_len;
    size_t messages, messages_len; /* the messages array in the body */
    size_t kwargs, kwargs_len;     /* chat_template_kwargs in the body, or TOOL_ABSENT */
    int thinking_given;      /* enable_thinking was in the request */
    int logprobs;            /* log probabilities asked (chat: logprobs, completions: logprobs N) */
    int top_n;               /* top candidates each (chat: top_logprobs) */
    int top_given;           /* top_logprobs was in the request */
    int post_sampling;       /* post_sampling_probs: the drawn distribution, not the raw logits' */
    int pith_sampling;       /* pith_sampling: each token's cuts and nucleus too */
    int cache_prompt;        /* cache_prompt (default true): reuse what a slot's cache shares with the prompt */
    ReplyText text;          /* the stop strings read, and the think split */
    char why[400];           /* what is wrong with the request */
} Request;

/* The reply being written. */
typedef struct {
    Server *sv;
    Request *rq;
    const Slot *es;          /* the engine's slot: the tokens' log probabilities (Slot.probs) */
    uint64_t id;
    int64_t created;
    int field;               /* string open in the output: 0 none, 1 content, 2 reasoning */
    int chunk_open;          /* streaming: a data: chunk has been started for this token */
    int any_content;
    int tools;               /* the engine's slot splits tool calls out of the content */
    uint64_t text_offset;    /* completions' logprobs: bytes of the tokens so far */
    char *calls;             /* non-streamed: the tool_calls array so far */
    size_t calls_n, calls_cap;
} Reply;

#define OUT_LIT(sv, lit) server_out((sv), lit, sizeof lit - 1)
#define CACHE_DIR_MIN 64 /* --cache-dir: the shortest prompt worth a file */

/* The HTTP status of a request the engine refused, by the kind of failure:
 * the request's fault, or the server's. */
static int status_http(PithStatus st)
{
    return st == PITH_BAD_INPUT || st == PITH_UNSUPPORTED || st == PITH_NO_MEMORY ? 400 : 500;
}

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

static int read_stop(Request *rq, Json *j)
{
    char buf[REPLY_MAX_STOP_LEN];
    size_t n;
    JsonType t = json_peek(j);
    if (t == JSON_STRING) {
        Json save = *j;
        if (json_string(j, NULL, (size_t)-1, &n) < 0) return json_bad(rq, j);
        if (n > REPLY_MAX_STOP_LEN) return bad(rq, "stop", "a stop string is longer than 128 bytes");
        *j = save;
        if (json_string(j, buf, sizeof buf, &n) < 0) return json_bad(rq, j);
        if (n && reply_text_add_stop(&rq->text, buf, n) != 0) return bad(rq, "stop", "too many stop strings");
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
        if (n > REPLY_MAX_STOP_LEN) return bad(rq, "stop", "a stop string is longer than 128 bytes");
        *j = save;
        if (json_string(j, buf, sizeof buf, &n) < 0) return json_bad(rq, j);
        if (n && reply_text_add_stop(&rq->text, buf, n) != 0) return bad(rq, "stop", "more than 4 stop strings");
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
    json_peek(j); /* to the value's first byte */
    rq->kwargs = j->pos;
    Json save = *j;
    if (json_skip(j) < 0) return json_bad(rq, j);
    rq->kwargs_len = j->pos - rq->kwargs;
    *j = save;
    if (json_peek(j) != JSON_OBJECT) return bad(rq, "chat_template_kwargs", "expected an object");
    int v = -1;
    if (read_bool_in_object(rq, j, "chat_template_kwargs", "enable_thinking", "chat_template_kwargs.enable_thinking", &v) <
        0)
        return -1;
    if (v >= 0) {
        rq->thinking = v;
        rq->thinking_given = 1;
    }
    return 0;
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
static int read_request(Request *rq, const char *body, size_t len, Arena *ra)
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
            JsonType t = json_peek(&j); /* at the value's first byte */
            rq->messages = j.pos;
            if (t != JSON_ARRAY) {
                if (j.failed) return json_bad(rq, &j);
                return bad(rq, "messages", "expected an array");
            }
            if (json_skip(&j) < 0) return json_bad(rq, &j);
            rq->messages_len = j.pos - rq->messages;
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
            json_peek(&j); /* to the value's first byte */
            size_t *slot = key[0] == 'r' ? &rq->response_format : !strcmp(key, "tools") ? &rq->tools : &rq->tool_choice;
            *slot = j.pos;
            if (json_skip(&j) < 0) return json_bad(rq, &j);
            if (slot == &rq->tools) rq->tools_len = j.pos - rq->tools;
        } else if (!strcmp(key, "stop")) {
            if (read_stop(rq, &j) < 0) return -1;
        } else if (!strcmp(key, "enable_thinking")) {
            if (read_bool(rq, &j, key, &rq->thinking) < 0) return -1;
            rq->thinking_given = 1;
        } else if (!strcmp(key, "chat_template_kwargs")) {
            if (read_kwargs(rq, &j) < 0) return -1;
        } else if (!strcmp(key, "logprobs") && rq->chat) {
            if (read_bool(rq, &j, key, &rq->logprobs) < 0) return -1;
        } else if (!strcmp(key, "logprobs") || !strcmp(key, "top_logprobs")) {
            if (read_number(rq, &j, key, 0, SAMPLER_TRACE_TOP, 1, &v) < 0) return -1;
            rq->top_n = (int)v;
            if (key[0] == 't') rq->top_given = 1;
            else rq->logprobs = 1;
        } else if (!strcmp(key, "post_sampling_probs")) {
            if (read_bool(rq, &j, key, &rq->post_sampling) < 0) return -1;
        } else if (!strcmp(key, "cache_prompt")) {
            if (read_bool(rq, &j, key, &rq->cache_prompt) < 0) return -1;
        } else if (!strcmp(key, "pith_sampling")) {
            if (read_bool(rq, &j, key, &rq->pith_sampling) < 0) return -1;
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
    if (rq->top_given && (!rq->chat || !rq->logprobs))
        return bad(rq, "top_logprobs", rq->chat ? "needs logprobs: true" : "is for chat completions (here: logprobs N)");
    rq->logprobs |= rq->pith_sampling;
    return 0;
}

/* ---- Writing the reply ---------------------------------------------------- */

/* A token's text as a JSON string, each byte that is not valid UTF-8 as
 * U+FFFD ("bytes" has them exactly); returns its length in bytes. */
static size_t out_token(Server *sv, int32_t id)
{
    size_t n;
    const char *p = tokenizer_piece(&sv->e->tok, id, &n);
    char esc[16];
    OUT_LIT(sv, "\"");
    for (size_t i = 0, len; i < n; i += len) {
        unsigned cp;
        int k = json_utf8_decode((const unsigned char *)p + i, n - i, &cp);
        len = k ? (size_t)k : 1;
        server_out(sv, esc + 1, json_escape_valid(p + i, len, esc, sizeof esc) - 2);
    }
    OUT_LIT(sv, "\"");
    return n;
}

/* {"id":..,"token":..,"logprob":..,"bytes":[..] (the object left open) */
static void out_candidate(Server *sv, SamplerLogprob c)
{
    size_t n;
    const char *p = tokenizer_piece(&sv->e->tok, c.id, &n);
    server_outf(sv, "{\"id\":%d,\"token\":", (int)c.id);
    out_token(sv, c.id);
    server_outf(sv, ",\"logprob\":%.9g,\"bytes\":[", (double)c.logprob);
    for (size_t i = 0; i < n; i++) server_outf(sv, "%s%u", i ? "," : "", (unsigned char)p[i]);
    OUT_LIT(sv, "]");
}

/* pith's own: how the distribution a token was drawn from was cut */
static void out_pith_sampling(Server *sv, const SamplerLogprobs *lp)
{
    server_outf(sv,
                "{\"greedy\":%s,\"n_kept\":%d,\"kept_mass\":%.6g,\"cut_top_k\":%d,\"cut_top_p\":%d,"
                "\"cut_min_p\":%d,\"masked\":%d}",
                lp->greedy ? "true" : "false", lp->n_kept, (double)lp->kept_mass, lp->cut_top_k, lp->cut_top_p,
                lp->cut_min_p, lp->n_masked);
}

/* The logprobs object of generated tokens [from, to): chat's
 * {"content": [...]}, or the completions' legacy parallel arrays (their
 * top_logprobs an object token -> logprob with the chosen token too, as
 * OpenAI's; text_offset in bytes of the reply's text). */
static void write_logprobs(Reply *rp, int from, int to)
{
    Server *sv = rp->sv;
    const Request *rq = rp->rq;
    const SamplerLogprobs *t = rp->es->probs;
    if (to > (int)sv->e->n_ctx) to = (int)sv->e->n_ctx; /* cannot happen: a reply is shorter than its context */
    if (rq->chat) {
        OUT_LIT(sv, "{\"content\":[");
        for (int i = from; i < to; i++) {
            if (i > from) OUT_LIT(sv, ",");
            out_candidate(sv, t[i].chosen);
            OUT_LIT(sv, ",\"top_logprobs\":[");
            for (int k = 0; k < t[i].n_top && k < rq->top_n; k++) {
                if (k) OUT_LIT(sv, ",");
                out_candidate(sv, t[i].top[k]);
                OUT_LIT(sv, "}");
            }
            OUT_LIT(sv, "]");
            if (rq->pith_sampling) {
                OUT_LIT(sv, ",\"pith_sampling\":");
                out_pith_sampling(sv, &t[i]);
            }
            OUT_LIT(sv, "}");
        }
        OUT_LIT(sv, "]}");
        return;
    }
    OUT_LIT(sv, "{\"tokens\":[");
    for (int i = from; i < to; i++) {
        if (i > from) OUT_LIT(sv, ",");
        out_token(sv, t[i].chosen.id);
    }
    OUT_LIT(sv, "],\"token_logprobs\":[");
    for (int i = from; i < to; i++) server_outf(sv, "%s%.9g", i > from ? "," : "", (double)t[i].chosen.logprob);
    OUT_LIT(sv, "],\"top_logprobs\":[");
    for (int i = from; i < to; i++) {
        if (i > from) OUT_LIT(sv, ",");
        OUT_LIT(sv, "{");
        int chosen_in = 0;
        for (int k = 0; k <= rq->top_n && k <= t[i].n_top; k++) {
            /* the best top_n, then the chosen token when it is not among them */
            SamplerLogprob c = k < rq->top_n && k < t[i].n_top ? t[i].top[k] : t[i].chosen;
            if (c.id == t[i].chosen.id && chosen_in++) break;
            if (k) OUT_LIT(sv, ",");
            out_token(sv, c.id);
            server_outf(sv, ":%.9g", (double)c.logprob);
        }
        OUT_LIT(sv, "}");
    }
    OUT_LIT(sv, "],\"text_offset\":[");
    for (int i = from; i < to; i++) {
        size_t n;
        tokenizer_piece(&sv->e->tok, t[i].chosen.id, &n);
        server_outf(sv, "%s%llu", i > from ? "," : "", (unsigned long long)rp->text_offset);
        rp->text_offset += n;
    }
    OUT_LIT(sv, "]");
    if (rq->pith_sampling) {
        OUT_LIT(sv, ",\"pith_sampling\":[");
        for (int i = from; i < to; i++) {
            if (i > from) OUT_LIT(sv, ",");
            out_pith_sampling(sv, &t[i]);
        }
        OUT_LIT(sv, "]");
    }
    OUT_LIT(sv, "}");
}

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

/* Ends this token's chunk (streaming) and sends it, with the log
 * probabilities of generated token `tok` when it is not -1 (in a chunk of
 * its own when the token showed no text: held by a stop string, a
 * character not complete yet). */
static void chunk_end(Reply *rp, int tok)
{
    Server *sv = rp->sv;
    if (!rp->chunk_open) {
        if (tok < 0) return;
        chunk_open(rp);
        if (!rp->rq->chat) OUT_LIT(sv, "\"text\":\"\"");
    }
    if (rp->field) OUT_LIT(sv, "\"");
    if (rp->rq->chat) OUT_LIT(sv, "}");
    if (tok >= 0) {
        OUT_LIT(sv, ",\"logprobs\":");
        write_logprobs(rp, tok, tok + 1);
    } else if (!rp->rq->chat) OUT_LIT(sv, ",\"logprobs\":null");
    OUT_LIT(sv, ",\"finish_reason\":null}]}\n\n");
    rp->field = 0;
    rp->chunk_open = 0;
    server_out_flush(sv);
}

static void chunk_close(Reply *rp)
{
    chunk_end(rp, -1);
}

static void write_text(Reply *rp, int kind, const char *p, size_t n)
{
    Server *sv = rp->sv;
    int field = kind == REPLY_REASONING ? 2 : 1;
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

/* ... and, as llama-server, a speculative reply's drafted and accepted tokens */
static void write_usage(Server *sv, const Slot *es, int n_prompt, int n_cached, int n_gen, double t_prompt, double t_gen)
{
    int n_filled = n_prompt - n_cached;
    server_outf(sv,
                "\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,"
                "\"prompt_tokens_details\":{\"cached_tokens\":%d}},",
                n_prompt, n_gen, n_prompt + n_gen, n_cached);
    server_outf(sv,
                "\"timings\":{\"cache_n\":%d,\"prompt_n\":%d,\"prompt_ms\":%.3f,\"prompt_per_second\":%.3f,"
                "\"predicted_n\":%d,\"predicted_ms\":%.3f,\"predicted_per_second\":%.3f",
                n_cached, n_filled, t_prompt * 1e3, t_prompt > 0 ? n_filled / t_prompt : 0.0, n_gen, t_gen * 1e3,
                t_gen > 0 ? n_gen / t_gen : 0.0);
    if (es->n_drafted) server_outf(sv, ",\"draft_n\":%u,\"draft_n_accepted\":%u", es->n_drafted, es->n_accepted);
    OUT_LIT(sv, "}");
}

/* ---- Slots ------------------------------------------------------------------
 * A request in a slot: its connection, the request as read and the reply
 * being written. The engine's slot (engine.h) holds the rest: the
 * sequence, the sampler, the grammar, and the reply's text on its way
 * (stop strings, the think split, tool calls), which comes back here
 * through the sink's callbacks. Which request goes to which slot, and in
 * which order prompts are fed, is decided here; engine_step does the work. */
typedef struct {
    Slot *es;                  /* the engine's slot */
    int busy;
    Conn *c;
    Request rq;
    Reply rp;
    size_t out_len;            /* its response buffer, sv->slot_out[i] */
    int out_failed;
    uint64_t order, last_used;
    uint32_t unsaved;          /* --cache-dir: the first positions to write when the server is idle (0: none) */
    double t_fetch;            /* seconds taking the prompt's prefix from another slot or a file (in prompt_ms) */
} ServeSlot;

static ServeSlot slots[ENGINE_MAX_SLOTS];
static uint64_t slot_clock;

/* Points the server's output at slot i (server_out* write the active
 * connection's buffer). */
static void slot_enter(Server *sv, int i)
{
    ServeSlot *sl = &slots[i];
    sv->active = sl->c;
    sv->out = sv->slot_out[i];
    sv->out_len = sl->out_len;
    sv->out_failed = sl->out_failed;
    sv->out_chunked = 1;
}

static void slot_leave(Server *sv, int i)
{
    ServeSlot *sl = &slots[i];
    sl->out_len = sv->out_len;
    sl->out_failed = sv->out_failed;
    sv->active = NULL;
}

static void slot_free(Server *sv, int i)
{
    slot_release(slots[i].es);
    slots[i].busy = 0;
    slots[i].c = NULL;
    slots[i].last_used = ++slot_clock;
    sv->n_busy--;
}

/* The slot's reply ends here: the tail (finish_reason, usage), the log
 * line, the connection closed. gone: the client left; nothing is written. */
static void slot_finish(Server *sv, int i, const char *finish, int gone)
{
    ServeSlot *sl = &slots[i];
    const Slot *es = sl->es;
    Request *rq = &sl->rq;
    Reply *rp = &sl->rp;
    HttpRequest *hr = &sl->c->req;
    int n = (int)es->n_prompt, k = (int)es->n_cached, n_gen = es->n_gen;
    double end = es->t_end > 0 ? es->t_end : port_seconds();
    double t_prompt = es->began ? es->t_begin - es->t_start + sl->t_fetch : 0, t_gen = es->began ? end - es->t_begin : 0;
    slot_enter(sv, i);
    gone = gone || sv->out_failed || sl->c->gone;
    if (!gone) {
        if (rp->tools && es->split.n_calls > es->split.n_bad && !strcmp(finish, "stop")) finish = "tool_calls";
        if (rq->stream) {
            chunk_close(rp);
            chunk_open(rp);
            if (rq->chat) server_outf(sv, "},\"finish_reason\":\"%s\"}],", finish);
            else server_outf(sv, "\"text\":\"\",\"logprobs\":null,\"finish_reason\":\"%s\"}],", finish);
            write_usage(sv, es, n, k, n_gen, t_prompt, t_gen);
            OUT_LIT(sv, "}\n\n");
            rp->chunk_open = 0;
            if (rq->include_usage) {
                server_outf(sv,
                            "data: {\"id\":\"%s-%llu\",\"object\":\"%s\",\"created\":%lld,\"model\":%s,\"choices\":[],",
                            rq->chat ? "chatcmpl" : "cmpl", (unsigned long long)rp->id,
                            rq->chat ? "chat.completion.chunk" : "text_completion", (long long)rp->created,
                            model_json(sv));
                write_usage(sv, es, n, k, n_gen, t_prompt, t_gen);
                OUT_LIT(sv, "}\n\n");
            }
            OUT_LIT(sv, "data: [DONE]\n\n");
        } else {
            if (rp->field) OUT_LIT(sv, "\"");
            if (rq->chat) {
                int calls = rp->tools && es->split.n_calls > 0;
                if (!rp->any_content) {
                    if (calls) OUT_LIT(sv, ",\"content\":null");
                    else OUT_LIT(sv, ",\"content\":\"\"");
                }
                if (calls && rp->calls_n <= rp->calls_cap) {
                    OUT_LIT(sv, ",\"tool_calls\":[");
                    server_out(sv, rp->calls, rp->calls_n);
                    OUT_LIT(sv, "]");
                }
                OUT_LIT(sv, "}");
            }
            if (rq->logprobs) {
                OUT_LIT(sv, ",\"logprobs\":");
                write_logprobs(rp, 0, n_gen);
            } else if (!rq->chat) OUT_LIT(sv, ",\"logprobs\":null");
            server_outf(sv, ",\"finish_reason\":\"%s\"}],", finish);
            write_usage(sv, es, n, k, n_gen, t_prompt, t_gen);
            OUT_LIT(sv, "}\n");
        }
        server_out_end(sv);
        if (!sv->out_failed) sv->n_done++;
    }
    port_err("serve: %s %.*s: prompt %d tokens (%u cached) in %.3f s, %d generated in %.3f s (%.1f tokens/s), %s\n",
             rq->stream ? "stream" : "json", (int)hr->path_len, hr->path, n, es->n_cached, t_prompt, n_gen, t_gen,
             t_gen > 0 ? n_gen / t_gen : 0.0, gone || sv->out_failed ? "client gone" : finish);
    Conn *c = sl->c;
    slot_leave(sv, i);
    server_close(sv, c, 1);
    /* --cache-dir: a prompt mostly computed here is worth a file */
    if (sv->opt.cache_dir && rq->cache_prompt && n >= CACHE_DIR_MIN && 2 * k <= n &&
        slot_holds_prefix(sv->e, es, (uint32_t)n))
        sl->unsaved = (uint32_t)n;
    slot_free(sv, i);
}

/* A request the model cannot answer (a forward error, non-finite logits):
 * 500 before the reply has begun, else the stream ends with the reason;
 * the engine emptied the slot's sequence so no later request reuses it. */
static void slot_fail(Server *sv, int i, const char *why)
{
    ServeSlot *sl = &slots[i];
    Conn *c = sl->c;
    HttpRequest *hr = &c->req;
    if (!sl->es->began) {
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

/* ---- The sink: what the engine's slot hands back while it generates ---- */

/* Which of the server's slots a sink callback is for. */
static int sink_slot(void *ctx)
{
    return (int)((ServeSlot *)ctx - slots);
}

/* The prompt is in: the reply begins. */
static void on_begin(void *ctx)
{
    Server *sv = ((ServeSlot *)ctx)->rp.sv;
    int i = sink_slot(ctx);
    ServeSlot *sl = &slots[i];
    Request *rq = &sl->rq;
    Reply *rp = &sl->rp;
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
}

static void on_text(void *ctx, int kind, const char *p, size_t n)
{
    ServeSlot *sl = ctx;
    Server *sv = sl->rp.sv;
    int i = sink_slot(ctx);
    slot_enter(sv, i);
    write_text(&sl->rp, kind, p, n);
    slot_leave(sv, i);
}

static void on_call(void *ctx, int index, const char *name, size_t name_len, const char *args, size_t args_len)
{
    ServeSlot *sl = ctx;
    Server *sv = sl->rp.sv;
    int i = sink_slot(ctx);
    slot_enter(sv, i);
    on_tool_call(&sl->rp, index, name, name_len, args, args_len);
    slot_leave(sv, i);
}

static void on_args(void *ctx, int index, const char *p, size_t n)
{
    ServeSlot *sl = ctx;
    Server *sv = sl->rp.sv;
    int i = sink_slot(ctx);
    slot_enter(sv, i);
    on_tool_args(&sl->rp, index, p, n);
    slot_leave(sv, i);
}

/* After each token's text: its chunk ends (streaming); a client gone
 * stops the slot. */
static int on_token(void *ctx, int32_t id)
{
    (void)id;
    ServeSlot *sl = ctx;
    Server *sv = sl->rp.sv;
    int i = sink_slot(ctx);
    sv->n_gen_tokens++;
    slot_enter(sv, i);
    if (sl->rq.stream) chunk_end(&sl->rp, sl->rq.logprobs ? sl->es->n_gen - 1 : -1);
    int gone = sv->out_failed;
    slot_leave(sv, i);
    return gone;
}

/* ---- The step ---------------------------------------------------------------- */

/* The engine stopped the slot: its reply ends, as it stopped. */
static void slot_done(Server *sv, int i)
{
    const Slot *es = slots[i].es;
    switch (es->stop) {
    case SLOT_STOP_ERROR: slot_fail(sv, i, es->err); break;
    case SLOT_STOP_CALLER: slot_finish(sv, i, "stop", 1); break;
    case SLOT_STOP_LENGTH:
    case SLOT_STOP_CONTEXT: slot_finish(sv, i, "length", 0); break;
    default: slot_finish(sv, i, "stop", 0); break;
    }
}

/* One step: the next token of every generating slot, then prompt chunks
 * of the slots still prefilling, oldest first, in what is left of the
 * batch, so a long prompt holds the running replies for one step at most. */
void api_step(Server *sv)
{
    Engine *e = sv->e;
    Slot *order[ENGINE_MAX_SLOTS];
    int n = 0;
    for (int i = 0; i < sv->n_slots; i++) {
        ServeSlot *sl = &slots[i];
        if (!sl->busy) continue;
        if (sl->c->gone || sl->out_failed) {
            slot_cancel(sl->es);
            slot_finish(sv, i, "stop", 1);
        } else if (sl->es->state == SLOT_GENERATING) order[n++] = sl->es;
    }
    for (;;) { /* prefilling slots, oldest first */
        int best = -1;
        for (int i = 0; i < sv->n_slots; i++) {
            ServeSlot *sl = &slots[i];
            int taken = 0;
            for (int p = 0; p < n; p++) taken |= order[p] == sl->es;
            if (sl->busy && sl->es->state == SLOT_PROMPT && !taken && (best < 0 || sl->order < slots[best].order)) best = i;
        }
        if (best < 0) break;
        order[n++] = slots[best].es;
    }
    if (n == 0) return;
    double t0 = port_seconds();
    int took = engine_step(e, order, n);
    sv->step_seconds += port_seconds() - t0;
    if (took > 0) sv->n_steps++;
    for (int p = 0; p < n; p++) {
        sv->n_prompt_tokens += order[p]->fed;
        if (order[p]->state == SLOT_DONE) slot_done(sv, (int)order[p]->index);
    }
}

/* The free slot whose cache the request continues (the same conversation
 * going on: the common prefix is at least half of what the slot holds),
 * the longest such prefix first; else an empty slot; else the one unused
 * longest. */
static int slot_choose(Server *sv, const int32_t *ids, int n)
{
    int best = -1, other = -1;
    uint32_t best_k = 0;
    for (int i = 0; i < sv->n_slots; i++) {
        ServeSlot *sl = &slots[i];
        if (sl->busy) continue;
        uint32_t k = slot_common_prefix(sl->es, ids, n), past = sl->es->seq.n_past;
        if (k > 0 && 2 * k >= past && k > best_k) {
            best = i;
            best_k = k;
        }
        if (other < 0) other = i;
        else {
            uint32_t po = slots[other].es->seq.n_past;
            if ((past == 0 && po > 0) || ((past == 0) == (po == 0) && sl->last_used < slots[other].last_used)) other = i;
        }
    }
    return best >= 0 ? best : other;
}

/* Whether taking `best` positions from elsewhere (another slot, a file)
 * instead of the `own` a slot holds is worth it: it saves 16 positions or
 * more (not a shared template header) and a 256th of what is taken (a
 * position's rows copy in microseconds; a prompt token computes in
 * milliseconds to tens of them on a board). */
static int worth_taking(uint32_t own, uint32_t best)
{
    return best >= own + 16 && (uint64_t)(best - own) * 256 >= best;
}

/* The prefix cache across slots: when another slot (busy or not) holds a
 * longer prefix of the prompt than slot i, its positions are copied into
 * slot i (slot_copy_prefix) when worth_taking, so that a system prompt
 * computed once serves every slot. */
static void copy_longer_prefix(Server *sv, int i, const int32_t *ids, int n)
{
    uint32_t own = slot_common_prefix(slots[i].es, ids, n), best = own;
    int from = -1;
    for (int j = 0; j < sv->n_slots; j++) {
        uint32_t k = j == i ? 0 : slot_common_prefix(slots[j].es, ids, n);
        if (k >= (uint32_t)n) k = (uint32_t)n - 1; /* the last id is fed again, for its logits */
        if (k > best) best = k, from = j;
    }
    if (from >= 0 && worth_taking(own, best)) slot_copy_prefix(sv->e, slots[i].es, slots[from].es, best);
}

/* ---- The disk cache (--cache-dir) ------------------------------------------
 * A request whose prompt was mostly computed (CACHE_DIR_MIN positions or
 * more, at least half of them new) leaves them to be written to the folder
 * when the server is next idle (api_idle: no reply waits for the write); a
 * prompt that a file there begins with longer than any slot holds it is
 * loaded into the request's slot (slot_cache_load) before it starts, so a
 * long system prompt survives restarts. Files are the prompt cache's
 * ("pith-HASH.kv", slot_cache_file_name); past --cache-dir-size the oldest
 * go. Only what the slot still holds after the reply is kept: not the
 * recurrent states of Qwen3.5 and LFM2 (the state at the end of the prompt
 * is gone), nor rings that the reply went past (slot_holds_prefix). */

typedef struct {
    uint64_t bytes, oldest_mtime;
    char oldest[64];
} DirUse;

static void dir_use(void *ctx, const char *name, uint64_t bytes, int64_t mtime)
{
    DirUse *u = ctx;
    u->bytes += bytes;
    if (strlen(name) < sizeof u->oldest && (!u->oldest[0] || (uint64_t)mtime < u->oldest_mtime)) {
        u->oldest_mtime = (uint64_t)mtime;
        strcpy(u->oldest, name);
    }
}

/* Removes the oldest files until the rest fit --cache-dir-size. */
static void cache_dir_trim(Server *sv)
{
    char path[4096 + 64];
    for (;;) {
        DirUse u = {0, 0, ""};
        if (port_dir_files(sv->opt.cache_dir, "pith-", ".kv", dir_use, &u) != 0 || u.bytes <= sv->opt.cache_dir_size ||
            !u.oldest[0])
            return;
        snprintf(path, sizeof path, "%s/%s", sv->opt.cache_dir, u.oldest);
        if (port_remove(path) != 0) return;
    }
}

void api_idle(Server *sv)
{
    char name[40], path[4096 + 64], warn[1024];
    int wrote = 0;
    for (int i = 0; i < sv->n_slots; i++) {
        ServeSlot *sl = &slots[i];
        uint32_t n = sl->unsaved;
        if (!n || sl->busy) continue;
        sl->unsaved = 0;
        slot_cache_file_name(sv->e, sl->es->history, n, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", sv->opt.cache_dir, name);
        if (slot_cache_save(sv->e, sl->es, n, path, NULL, warn, sizeof warn) != 0) port_err("serve: note: %s\n", warn);
        else wrote = 1;
    }
    if (wrote) cache_dir_trim(sv);
}

typedef struct {
    Server *sv;
    const Slot *es;
    const int32_t *ids;
    uint32_t n, best;
    char name[64];
} DirFind;

static void dir_find(void *ctx, const char *name, uint64_t bytes, int64_t mtime)
{
    DirFind *f = ctx;
    char path[4096 + 64];
    (void)bytes;
    (void)mtime;
    if (strlen(name) >= sizeof f->name) return;
    snprintf(path, sizeof path, "%s/%s", f->sv->opt.cache_dir, name);
    uint32_t k = slot_cache_common(f->sv->e, f->es, path, f->ids, f->n);
    if (k > f->best) {
        f->best = k;
        strcpy(f->name, name);
    }
}

/* A file of --cache-dir that begins the prompt ids[0..n) with more than
 * slot i holds (worth_taking) is loaded into it. */
static void load_from_cache_dir(Server *sv, int i, const int32_t *ids, int n)
{
    Slot *es = slots[i].es;
    uint32_t own = slot_common_prefix(es, ids, n);
    DirFind f = {sv, es, ids, (uint32_t)n - 1, own, ""}; /* the last id is fed again, for its logits */
    if (port_dir_files(sv->opt.cache_dir, "pith-", ".kv", dir_find, &f) != 0 || !f.name[0]) return;
    if (!worth_taking(own, f.best)) return;
    char path[4096 + 64], warn[1024];
    snprintf(path, sizeof path, "%s/%s", sv->opt.cache_dir, f.name);
    if (slot_cache_load(sv->e, es, path, NULL, warn, sizeof warn) != 0) { /* damaged: not tried again */
        port_err("serve: note: %s; %s\n", warn, port_remove(path) == 0 ? "the file is removed" : "cannot remove it");
    }
}

/* ---- Endpoints ------------------------------------------------------------- */

/* GET /slots: each slot's state and the positions its cache holds. */
static void api_slots(Server *sv, Conn *c)
{
    char body[ENGINE_MAX_SLOTS * 160 + 64];
    size_t n = 0;
    n += (size_t)snprintf(body + n, sizeof body - n, "[");
    for (int i = 0; i < sv->n_slots; i++) {
        const ServeSlot *sl = &slots[i];
        const Slot *es = sl->es;
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"id\":%d,\"state\":\"%s\",\"n_ctx\":%u,\"n_past\":%u,\"n_prompt\":%d,"
                              "\"n_cached\":%u,\"n_generated\":%d}",
                              i ? "," : "", i, !sl->busy ? "idle" : es->began ? "generating" : "prompt", es->seq.n_ctx,
                              es->seq.n_past, sl->busy ? (int)es->n_prompt : 0, sl->busy ? es->n_cached : 0,
                              sl->busy ? es->n_gen : 0);
    }
    n += (size_t)snprintf(body + n, sizeof body - n, "]\n");
    server_respond(sv, c, 200, "application/json", body, n < sizeof body ? n : 0);
}

/* A file name for --slot-save-path: 1..200 printable ASCII bytes, none of
 * them a path separator or a shell or Windows special, not starting with a
 * dot (no "..", no hidden files). */
static int slot_file_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 200 || s[0] == '.') return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f || strchr("/\\:*?\"<>|", s[i])) return 0;
    return 1;
}

/* POST /slots/ID?action=save|restore|erase (with --slot-save-path): the
 * slot's cache written to a file of that folder (prompt_cache.c's format,
 * the one of `run --prompt-cache`), put back from one, or emptied, with
 * llama-server's replies. A busy slot is refused (409), not waited for. */
static void api_slot_action(Server *sv, Conn *c)
{
    const HttpRequest *r = &c->req;
    Engine *e = sv->e;
    if (!sv->opt.slot_save_path) {
        server_error(sv, c, 501, "not_supported", "slot actions need the server started with --slot-save-path DIR");
        return;
    }
    int id = 0;
    size_t i = 7;
    for (; i < r->path_len && i < 10 && r->path[i] >= '0' && r->path[i] <= '9'; i++) id = id * 10 + (r->path[i] - '0');
    if (i == 7 || i != r->path_len || id >= sv->n_slots) {
        server_error(sv, c, 404, "not_found", "no slot %.*s: the slots are 0 to %d (--slots)",
                     (int)(r->path_len - 7 < 20 ? r->path_len - 7 : 20), r->path + 7, sv->n_slots - 1);
        return;
    }
    const char *act = "";
    size_t act_len = 0;
    http_query_value(r->query, r->query_len, "action", &act, &act_len);
    int save = act_len == 4 && !memcmp(act, "save", 4), restore = act_len == 7 && !memcmp(act, "restore", 7);
    if (!save && !restore && !(act_len == 5 && !memcmp(act, "erase", 5))) {
        server_error(sv, c, 400, "invalid_request", "?action= must be save, restore or erase");
        return;
    }
    ServeSlot *sl = &slots[id];
    if (sl->busy) {
        server_error(sv, c, 409, "slot_busy", "slot %d is serving a request: ask again when it is idle", id);
        return;
    }
    char body[512], name[256];
    int n;
    if (!save) sl->unsaved = 0; /* what it held is gone */
    if (!save && !restore) {
        uint32_t held = sl->es->seq.n_past;
        slot_reset(sl->es);
        n = snprintf(body, sizeof body, "{\"id_slot\":%d,\"n_erased\":%u}\n", id, held);
        server_respond(sv, c, 200, "application/json", body, (size_t)n);
        return;
    }
    /* {"filename": NAME} */
    Json j;
    size_t name_len = 0;
    int found = 0;
    json_init(&j, c->buf + r->head_len, (size_t)r->content_length, "request");
    if (json_enter(&j, '{') == 0) {
        int more;
        while ((more = json_next(&j, '}')) > 0) {
            char key[32];
            size_t kl;
            if (json_key(&j, key, sizeof key - 1, &kl) < 0) break;
            key[kl] = '\0';
            if (strcmp(key, "filename") != 0) json_skip(&j);
            else if (json_peek(&j) == JSON_STRING && json_string(&j, name, sizeof name - 1, &name_len) == 0) found = 1;
            else break;
        }
        if (more == 0) json_end(&j);
    }
    if (!found || j.failed || !slot_file_name_ok(name, name_len)) {
        server_error(sv, c, 400, "invalid_request", "%s",
                     j.failed && j.err[0] ? j.err
                     : !found ? "filename: missing (the body is {\"filename\": NAME})"
                              : "filename: a plain file name is needed (printable ASCII, no path, not starting with '.')");
        return;
    }
    name[name_len] = '\0';
    char path[4096 + 256], warn[1024];
    const char *dir = sv->opt.slot_save_path;
    size_t dl = strlen(dir);
    snprintf(path, sizeof path, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", name);
    uint32_t held = sl->es->seq.n_past;
    uint64_t bytes = 0;
    double t0 = port_seconds();
    if (save && held == 0) {
        server_error(sv, c, 400, "invalid_request", "slot %d holds nothing to save", id);
        return;
    }
    int rc = save ? slot_cache_save(e, sl->es, held, path, &bytes, warn, sizeof warn)
                  : slot_cache_load(e, sl->es, path, &bytes, warn, sizeof warn);
    double ms = (port_seconds() - t0) * 1e3;
    if (rc != 0) {
        server_error(sv, c, save ? 500 : 400, save ? "internal_error" : "invalid_request", "%s", warn);
        return;
    }
    n = snprintf(body, sizeof body,
                 "{\"id_slot\":%d,\"filename\":\"%s\",\"%s\":%u,\"%s\":%llu,\"timings\":{\"%s\":%.3f}}\n", id, name,
                 save ? "n_saved" : "n_restored", sl->es->seq.n_past, save ? "n_written" : "n_read",
                 (unsigned long long)bytes, save ? "save_ms" : "restore_ms", ms);
    server_respond(sv, c, 200, "application/json", body, (size_t)n);
}

/* GET /metrics (--metrics): the Prometheus text format. */
static void api_metrics(Server *sv, Conn *c)
{
    char body[4096];
    uint64_t kv_used = 0, kv_total = 0;
    int busy = 0;
    for (int i = 0; i < sv->n_slots; i++) {
        kv_used += slots[i].es->seq.n_past;
        kv_total += slots[i].es->seq.n_ctx;
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

static int render_chat(Server *sv, Conn *c, const Request *rq, const char *body, size_t body_len,
                       const ToolConstraint *ac, Arena *ra, const char **text, size_t *text_len);

/* What every request to a model begins with: rq's defaults, the body read
 * into it (with the request scratch ra), and what its tools ask
 * (response_format too when it generates). 0, or -1 when answered (400). */
static int start_request(Server *sv, Conn *c, Request *rq, int chat, int generates, Arena *ra, ToolConstraint *ac)
{
    Engine *e = sv->e;
    memset(rq, 0, sizeof *rq);
    rq->chat = chat;
    rq->thinking = e->opt.thinking;
    rq->max_tokens = -1;
    rq->post_sampling = 1; /* logprobs of the distribution each token was drawn from (the choice) */
    rq->cache_prompt = 1;
    rq->sp = sv->cli_sampling;
    rq->response_format = rq->tool_choice = rq->tools = rq->kwargs = TOOL_ABSENT;
    reply_text_init(&rq->text, 0, NULL, NULL);
    const char *body = c->buf + c->req.head_len;
    size_t body_len = (size_t)c->req.content_length;
    arena_init(ra, sv->region, sv->region_size);
    if (read_request(rq, body, body_len, ra) != 0 ||
        tool_constraint(body, body_len, generates ? rq->response_format : TOOL_ABSENT, chat ? rq->tool_choice : TOOL_ABSENT,
                        chat ? rq->tools : TOOL_ABSENT, e->tool_format, e->grammar_text, ENGINE_GRAMMAR_TEXT + 1, ac,
                        rq->why, sizeof rq->why) != 0) {
        server_error(sv, c, 400, "invalid_request", "%s", rq->why);
        return -1;
    }
    return 0;
}

/* POST /apply-template (llama-server's): a chat request's prompt as the
 * model's template renders it, {"prompt": TEXT}, nothing generated. */
static void api_apply_template(Server *sv, Conn *c)
{
    static Request rq;
    Engine *e = sv->e;
    const char *body = c->buf + c->req.head_len;
    size_t body_len = (size_t)c->req.content_length;
    Arena ra;
    ToolConstraint ac; /* the tools as a chat completion shows them (the grammar is not used) */
    if (start_request(sv, c, &rq, 1, 0, &ra, &ac) != 0) return;
    const char *text;
    size_t len;
    Arena before = ra; /* the prompt is taken first: what follows it is free again */
    if (render_chat(sv, c, &rq, body, body_len, &ac, &ra, &text, &len) != 0) return;
    ra = before;
    arena_take(&ra, e->tok.max_text + 1);
    uint64_t cap = json_escape(text, len, NULL, 0) + 32;
    char *out = arena_take(&ra, cap);
    if (!out) {
        server_error(sv, c, 500, "internal_error", "the request scratch is too small (a planning bug)");
        return;
    }
    size_t n = (size_t)snprintf(out, cap, "{\"prompt\":");
    n += json_escape(text, len, out + n, cap - n);
    n += (size_t)snprintf(out + n, cap - n, "}\n");
    server_respond(sv, c, 200, "application/json", out, n);
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
                         model_json(sv), (long long)port_wall_seconds(), sv->e->n_ctx, sv->e->n_vocab);
        server_respond(sv, c, 200, "application/json", body, n > 0 && (size_t)n < sizeof body ? (size_t)n : 0);
    } else if (http_path_is(r->path, r->path_len, "/slots")) {
        api_slots(sv, c);
    } else if (r->path_len > 7 && memcmp(r->path, "/slots/", 7) == 0) {
        api_slot_action(sv, c);
    } else if (http_path_is(r->path, r->path_len, "/metrics")) {
        api_metrics(sv, c);
    } else if (http_path_is(r->path, r->path_len, "/apply-template")) {
        api_apply_template(sv, c);
    }
    /* generation requests stay queued for server_run */
}

/* The prompt of a chat request: its messages (and tools, when the
 * template is to show them) rendered by the engine's template into the
 * request scratch. 0, or -1 when the request was answered with an error. */
static int render_chat(Server *sv, Conn *c, const Request *rq, const char *body, size_t body_len,
                       const ToolConstraint *ac, Arena *ra, const char **text, size_t *text_len)
{
    Engine *e = sv->e;
    if (rq->messages_len <= 2) {
        server_error(sv, c, 400, "invalid_request", "messages: the array is empty");
        return -1;
    }
    /* the prompt first (/apply-template keeps it and reuses what follows) */
    uint64_t cap = e->tok.max_text + 1;
    char *buf = arena_take(ra, cap);
    if (!buf) {
        server_error(sv, c, 500, "internal_error", "the request scratch is too small (a planning bug)");
        return -1;
    }
    ChatInput in;
    memset(&in, 0, sizeof in);
    in.messages = body + rq->messages;
    in.messages_len = rq->messages_len;
    if (ac->rewrite) {
        /* a template that cannot show the tools: the messages show them */
        char why[400];
        int64_t n = tool_prompt_messages(body, body_len, rq->messages, rq->tools, ac, e->no_system, NULL, 0, why,
                                         sizeof why);
        char *m = n >= 0 ? arena_take(ra, (uint64_t)n + 1) : NULL;
        if (n < 0 || !m ||
            tool_prompt_messages(body, body_len, rq->messages, rq->tools, ac, e->no_system, m, (size_t)n + 1, why,
                                 sizeof why) != n) {
            server_error(sv, c, 400, "invalid_request", "%s",
                         n < 0 ? why : "the messages with the tools described take more than the request scratch "
                                       "(planned from --max-body) holds");
            return -1;
        }
        in.messages = m;
        in.messages_len = (size_t)n;
    }
    if (ac->render && rq->tools != TOOL_ABSENT) {
        in.tools = body + rq->tools;
        in.tools_len = rq->tools_len;
    }
    if (rq->kwargs != TOOL_ABSENT) {
        in.kwargs = body + rq->kwargs;
        in.kwargs_len = rq->kwargs_len;
    }
    in.add_generation_prompt = 1;
    in.api_roles = 1;
    in.enable_thinking = rq->thinking_given || e->thinking_given ? rq->thinking : -1;
    ChatRenderer r = e->chat;
    r.now = port_template_seconds();
    char err[600];
    PithStatus st = chat_render_input(&r, &in, ra, buf, (size_t)cap, text_len, err, sizeof err);
    if (st == PITH_NO_MEMORY) {
        server_error(sv, c, 400, "context_length_exceeded", "%s (this server reads %llu bytes of prompt for a context of %u tokens)",
                     err, (unsigned long long)e->tok.max_text, e->n_ctx);
        return -1;
    }
    if (st != PITH_OK) {
        int http = status_http(st);
        server_error(sv, c, http, http == 400 ? "invalid_request" : "internal_error", "%s", err);
        return -1;
    }
    *text = buf;
    return 0;
}

void api_generate(Server *sv, Conn *c)
{
    Engine *e = sv->e;
    static Request rq;
    static Reply rp;
    memset(&rp, 0, sizeof rp);
    HttpRequest *hr = &c->req;
    int chat = http_path_is(hr->path, hr->path_len, "/v1/chat/completions") ||
               http_path_is(hr->path, hr->path_len, "/chat/completions");
    rp.sv = sv;
    rp.rq = &rq;
    rp.id = ++sv->n_requests;
    rp.created = port_wall_seconds();

    const char *body = c->buf + hr->head_len;
    size_t body_len = (size_t)hr->content_length;
    Arena ra;
    ToolConstraint ac; /* response_format and tools: a grammar, and the tool-call splitter */
    if (start_request(sv, c, &rq, chat, 1, &ra, &ac) != 0) return;
    /* held from the first token: no thinking block (the grammar is compiled
     * into the slot's state once the slot is chosen) */
    if (ac.grammar_len) rq.thinking = 0, rq.thinking_given = 1; /* the template is told too */

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
    else if (e->opt.seed >= 0) sp.seed = (uint64_t)e->opt.seed;
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
    int raw = !rq.chat || engine_template_is_raw(e);
    if (rq.chat) {
        if (render_chat(sv, c, &rq, body, body_len, &ac, &ra, &text, &text_len) != 0) return;
        reply_text_think(&rq.text, engine_opens_think(e, rq.thinking, text, text_len) ? 2 : 1);
    } else {
        reply_text_think(&rq.text, 0);
        text = rq.prompt;
        text_len = rq.prompt_len;
        if (text_len > e->tok.max_text) {
            server_error(sv, c, 400, "context_length_exceeded",
                         "the prompt of %zu bytes is longer than the %llu bytes this server reads for a context of %u "
                         "tokens",
                         text_len, (unsigned long long)e->tok.max_text, e->n_ctx);
            return;
        }
    }

    /* Token ids, as `pith run` makes them: the template's text as is, or
     * a raw prompt with BOS first when the model asks for it. */
    int n = engine_tokenize(e, text, text_len, raw);
    if (n < 0) {
        server_error(sv, c, 400, "context_length_exceeded", "the prompt does not fit the planned token buffer");
        return;
    }
    if (n == 0) {
        server_error(sv, c, 400, "invalid_request", "the prompt has no tokens");
        return;
    }
    uint32_t n_ctx = e->n_ctx;
    if ((uint64_t)n >= n_ctx) {
        server_error(sv, c, 400, "context_length_exceeded",
                     "the prompt has %d tokens; the context holds %u (-c), with room for at least one more", n, n_ctx);
        return;
    }

    /* Prefix reuse: the slot whose cache holds the longest prefix of these
     * ids takes the request, and only what differs is prefilled, in chunks
     * between the other slots' tokens (api_step). */
    int i = slot_choose(sv, e->ids, n);
    if (i < 0) { /* server_run hands a request over only with a slot free */
        server_error(sv, c, 503, "busy", "no free slot");
        return;
    }
    ServeSlot *sl = &slots[i];
    if (sl->unsaved && slot_common_prefix(sl->es, e->ids, n) < sl->unsaved) {
        port_err("serve: note: --cache-dir: slot %d's last prompt was not written (the server was not idle)\n", i);
        sl->unsaved = 0;
    }
    double t_fetch = port_seconds();
    if (rq.cache_prompt) copy_longer_prefix(sv, i, e->ids, n);
    if (rq.cache_prompt && sv->opt.cache_dir) load_from_cache_dir(sv, i, e->ids, n);
    sl->t_fetch = port_seconds() - t_fetch;
    /* response_format or forced tool calls: the slot's own grammar state */
    if (slot_set_grammar(e, sl->es, ac.grammar_len ? e->grammar_text : NULL, ac.grammar_len, ac.what) != 0) {
        int http = status_http(sl->es->status);
        server_error(sv, c, http, http == 400 ? "invalid_request" : "internal_error", "%s", sl->es->err);
        return;
    }
    SlotRequest srq;
    slot_request_defaults(e, &srq);
    srq.sampling = sp;
    /* serve never shifts the context: a full one ends the reply ("length") */
    srq.n_predict = (int64_t)n_ctx - n;
    if (rq.max_tokens >= 0 && rq.max_tokens < srq.n_predict) srq.n_predict = rq.max_tokens;
    srq.text = rq.text;
    srq.sink = (SlotSink){on_begin, on_text, on_call, on_args, on_token, sl};
    srq.no_reuse = !rq.cache_prompt;
    srq.probs = !rq.logprobs ? SLOT_PROBS_NONE : rq.post_sampling ? SLOT_PROBS_DRAWN : SLOT_PROBS_RAW;
    if (ac.parse) {
        srq.tools = 1;
        srq.tool_format = ac.format;
        srq.tool_body = body;
        srq.tool_body_len = body_len;
        srq.tool_offset = rq.tools;
        /* streamed: forced calls' arguments as they come (they cannot fall
         * back to content), and Qwen3.5's as they become certain */
        srq.tool_progressive = rq.stream;
        srq.tool_held = ac.held;
    }
    if (slot_start(e, sl->es, e->ids, n, &srq) != 0) {
        int http = status_http(sl->es->status);
        server_error(sv, c, http, http == 400 ? "invalid_request" : "internal_error", "%s", sl->es->err);
        return;
    }
    sl->busy = 1;
    sl->c = c;
    sl->out_len = 0;
    sl->out_failed = 0;
    sl->rq = rq;
    sl->rp = rp;
    sl->rp.rq = &sl->rq;
    sl->rp.es = sl->es;
    if (ac.parse) {
        /* the slot's tool_calls array: the request scratch is the next request's */
        sl->rp.tools = 1;
        sl->rp.calls = sv->slot_calls[i];
        sl->rp.calls_cap = SERVE_CALLS_CAP;
    }
    sl->order = ++slot_clock;
    sv->n_busy++;
    sv->n_requests_slotted++;
    sv->n_cached_tokens += sl->es->n_cached;
}

void api_init(Server *sv)
{
    for (int i = 0; i < sv->n_slots; i++) slots[i].es = engine_slot(sv->e, (uint32_t)i);
}

/* chat_request.c - a request's conversation rendered by the model's own
 * Jinja template or a built-in one (see chat_request.h). */
#include "chat_request.h"

#include <stdio.h>
#include <string.h>

#include "json.h"

/* The interpreter's work region: the values read from the JSON (a value
 * is 16 bytes; a conversation's JSON is mostly text, copied once), the
 * output and the blocks a template captures (set blocks, macros), and what
 * the template makes on the way. A conversation of many tiny values, or a
 * template that builds more, is refused ("needs more than its N bytes of
 * work memory") rather than planned for. */
static uint64_t jinja_work_bound(uint64_t json_bytes, uint64_t out_cap)
{
    return 4 * json_bytes + 2 * out_cap + ((uint64_t)128 << 10);
}

/* The built-in templates read {"messages": M, "tools": T} (chat.h). */
#define WRAP_BYTES 32

uint64_t chat_jinja_scratch_bound(uint64_t json_bytes, uint64_t out_cap)
{
    return json_bytes + jinja_work_bound(json_bytes, out_cap) + 4 * ARENA_ALIGN; /* the messages' copy, the work */
}

uint64_t chat_input_scratch_bound(uint64_t json_bytes, uint64_t out_cap)
{
    uint64_t builtin = json_bytes + WRAP_BYTES + chat_arena_bound(json_bytes + WRAP_BYTES) + 4 * ARENA_ALIGN;
    uint64_t jinja = chat_jinja_scratch_bound(json_bytes, out_cap);
    return builtin > jinja ? builtin : jinja;
}

/* An object's key into name (cap bytes): a key too long for it reads as
 * "" (no key compared here is that long), not as an error. Leaves j at the
 * value's first byte. 0, or -1 (j->err). */
static int member_key(Json *j, char *name, size_t cap)
{
    size_t kl;
    Json save = *j;
    if (json_key(j, name, cap - 1, &kl) < 0) {
        *j = save;
        if (json_key(j, NULL, (size_t)-1, &kl) < 0) return -1;
        kl = 0;
    }
    name[kl] = '\0';
    json_peek(j);
    return 0;
}

int json_member(const char *src, size_t len, const char *key, size_t *at, size_t *n)
{
    Json j;
    json_init(&j, src, len, "");
    if (json_enter(&j, '{') < 0) return -1;
    int r, found = 0;
    while ((r = json_next(&j, '}')) > 0) {
        char name[128];
        if (member_key(&j, name, sizeof name) < 0) return -1;
        size_t start = j.pos;
        JsonType t = json_peek(&j);
        if (json_skip(&j) < 0) return -1;
        if (!found && name[0] && !strcmp(name, key) && t != JSON_NULL) {
            *at = start;
            *n = j.pos - start;
            found = 1;
        }
    }
    return r < 0 ? -1 : found;
}

static PithStatus failf(PithStatus s, char *err, size_t cap, const char *fmt, const char *a, const char *b)
{
    snprintf(err, cap, fmt, a, b);
    return s;
}

static PithStatus render_builtin(const ChatRenderer *r, const ChatInput *in, Arena *scratch, char *out, size_t cap,
                                 size_t *len, char *err, size_t err_cap)
{
    /* the messages alone (error offsets are theirs), or with the tools */
    const char *wrap = in->messages;
    size_t n = in->messages_len;
    if (in->tools) {
        uint64_t wrap_len = in->messages_len + in->tools_len + WRAP_BYTES;
        char *w = arena_take(scratch, wrap_len + 1);
        if (!w) return failf(PITH_INTERNAL, err, err_cap, "internal error: the chat scratch is too small%s%s", "", "");
        n = (size_t)snprintf(w, wrap_len + 1, "{\"messages\":%.*s,\"tools\":%.*s}", (int)in->messages_len,
                             in->messages, (int)in->tools_len, in->tools);
        wrap = w;
    }
    ChatJsonSizes sizes;
    ChatJsonOut conv;
    if (chat_json_read(wrap, n, "messages", NULL, &sizes, err, err_cap) != 0) return PITH_BAD_INPUT;
    if (chat_json_out_take(&conv, scratch, &sizes) != 0)
        return failf(PITH_INTERNAL, err, err_cap, "internal error: the chat scratch is too small%s%s", "", "");
    if (chat_json_read(wrap, n, "messages", &conv, &sizes, err, err_cap) != 0) return PITH_BAD_INPUT;
    ChatOptions co;
    memset(&co, 0, sizeof co);
    co.add_generation_prompt = in->add_generation_prompt;
    co.enable_thinking = in->enable_thinking;
    co.continuation = in->continuation;
    co.tools = conv.tools;
    co.tools_len = conv.tools_len;
    co.n_tools = (int)sizes.n_tools;
    int64_t got = chat_render(r->builtin, conv.msgs, (int)sizes.n_messages, &co, out, cap);
    if (got < 0)
        return failf(PITH_BAD_INPUT, err, err_cap,
                     "messages: the %s template refuses this conversation (as its Jinja text raises an error)%s",
                     chat_template_name(r->builtin), "");
    if ((uint64_t)got >= cap) {
        snprintf(err, err_cap, "the rendered prompt of %lld bytes is longer than the %zu bytes planned", (long long)got,
                 cap ? cap - 1 : 0);
        return PITH_NO_MEMORY;
    }
    *len = (size_t)got;
    return PITH_OK;
}

/* What a Jinja template may assume of the messages (transformers checks no
 * more): an array of objects, each with a "role" string and no key twice.
 * Roles are the template's business (tool results are "ipython" for some).
 * Copies the array into out (len bytes) with each "content": null as ""
 * (an assistant turn of tool calls: most templates test `'x' in content`,
 * which jinja2 refuses on None; llama.cpp passes "" too). */
static PithStatus check_messages(const char *src, size_t len, int api_roles, char *out, size_t *out_len, char *err,
                                 size_t err_cap)
{
    size_t copied = 0, o = 0;
    Json j;
    json_init(&j, src, len, "messages");
    if (json_peek(&j) != JSON_ARRAY) {
        snprintf(err, err_cap, "messages: expected an array");
        return PITH_BAD_INPUT;
    }
    json_enter(&j, '[');
    int r, i = 0;
    while ((r = json_next(&j, ']')) > 0) {
        if (json_peek(&j) != JSON_OBJECT) {
            if (j.failed) break;
            snprintf(err, err_cap, "messages[%d]: expected an object", i);
            return PITH_BAD_INPUT;
        }
        json_enter(&j, '{');
        char keys[16][16];
        int n_keys = 0, has_role = 0, k;
        while ((k = json_next(&j, '}')) > 0) {
            char name[16];
            if (member_key(&j, name, sizeof name) < 0) break;
            size_t kl = strlen(name); /* 0: a long key, not one of those compared */
            for (int q = 0; kl && q < n_keys; q++)
                if (!strcmp(keys[q], name)) {
                    snprintf(err, err_cap, "messages[%d]: the key \"%s\" is given twice", i, name);
                    return PITH_BAD_INPUT;
                }
            if (kl && n_keys < 16) memcpy(keys[n_keys++], name, kl + 1);
            if (!strcmp(name, "content") && json_peek(&j) == JSON_NULL) {
                memcpy(out + o, src + copied, j.pos - copied);
                o += j.pos - copied;
                memcpy(out + o, "\"\"", 2);
                o += 2;
                copied = j.pos + 4;
            }
            if (!strcmp(name, "role")) {
                if (json_peek(&j) != JSON_STRING) {
                    if (j.failed) break;
                    snprintf(err, err_cap, "messages[%d]: role: expected a string", i);
                    return PITH_BAD_INPUT;
                }
                has_role = 1;
                char role[16];
                size_t rl;
                Json at = j;
                if (api_roles && json_string(&at, role, sizeof role - 1, &rl) == 0) {
                    role[rl] = '\0';
                    static const char *const api[] = {"system", "developer", "user", "assistant", "tool"};
                    int known = 0;
                    for (size_t q = 0; q < sizeof api / sizeof api[0]; q++) known |= !strcmp(role, api[q]);
                    if (!known) {
                        snprintf(err, err_cap, "messages[%d]: unknown role '%s' (system, developer, user, assistant, tool)", i,
                                 role);
                        return PITH_BAD_INPUT;
                    }
                } else if (api_roles) {
                    snprintf(err, err_cap, "messages[%d]: unknown role (system, developer, user, assistant, tool)", i);
                    return PITH_BAD_INPUT;
                }
            }
            if (json_skip(&j) < 0) break;
        }
        if (k < 0 || j.failed) break;
        if (!has_role) {
            snprintf(err, err_cap, "messages[%d]: no role", i);
            return PITH_BAD_INPUT;
        }
        i++;
    }
    if (r != 0 || j.failed || json_end(&j) < 0) {
        snprintf(err, err_cap, "%s", j.err);
        return PITH_BAD_INPUT;
    }
    if (i == 0) {
        snprintf(err, err_cap, "messages: the array is empty");
        return PITH_BAD_INPUT;
    }
    memcpy(out + o, src + copied, len - copied);
    *out_len = o + len - copied;
    return PITH_OK;
}

/* Each key of the kwargs object as a variable. */
static PithStatus set_kwargs(JinjaRender *jr, const char *src, size_t len, char *err, size_t err_cap)
{
    Json j;
    json_init(&j, src, len, "chat_template_kwargs");
    if (json_enter(&j, '{') < 0) {
        snprintf(err, err_cap, "%s", j.err);
        return PITH_BAD_INPUT;
    }
    int r;
    while ((r = json_next(&j, '}')) > 0) {
        char name[128];
        size_t kl;
        if (json_key(&j, name, sizeof name - 1, &kl) < 0) break;
        name[kl] = '\0';
        json_peek(&j); /* to the value's first byte */
        size_t start = j.pos;
        if (json_skip(&j) < 0) break;
        PithStatus s = jinja_set_json(jr, name, src + start, j.pos - start, 0, err, err_cap);
        if (s != PITH_OK) return s;
    }
    if (r != 0) {
        snprintf(err, err_cap, "%s", j.err[0] ? j.err : "chat_template_kwargs: a key longer than 127 bytes");
        return PITH_BAD_INPUT;
    }
    return PITH_OK;
}

PithStatus chat_render_input(const ChatRenderer *r, const ChatInput *in, Arena *scratch, char *out, size_t cap,
                             size_t *len, char *err, size_t err_cap)
{
    if (!r->jinja) return render_builtin(r, in, scratch, out, cap, len, err, err_cap);
    char *messages = arena_take(scratch, in->messages_len ? in->messages_len : 1);
    size_t messages_len;
    if (!messages) return failf(PITH_INTERNAL, err, err_cap, "internal error: the chat scratch is too small%s%s", "", "");
    PithStatus s = check_messages(in->messages, in->messages_len, in->api_roles, messages, &messages_len, err, err_cap);
    if (s != PITH_OK) return s;
    uint64_t json_bytes = in->messages_len + (in->tools ? in->tools_len : 0) + (in->kwargs ? in->kwargs_len : 0);
    uint64_t work_cap = jinja_work_bound(json_bytes, cap);
    void *work = arena_take(scratch, work_cap);
    if (!work) return failf(PITH_INTERNAL, err, err_cap, "internal error: the chat scratch is too small%s%s", "", "");
    JinjaLimits lim;
    jinja_limits_default(&lim);
    lim.max_output = cap ? cap - 1 : 0;
    JinjaRender *jr = jinja_render_begin(r->jinja, work, (size_t)work_cap, &lim);
    if (!jr) return failf(PITH_INTERNAL, err, err_cap, "internal error: the chat scratch is too small%s%s", "", "");
    s = jinja_set_json(jr, "messages", messages, messages_len, JINJA_JSON_TOOL_ARGUMENTS, err, err_cap);
    if (s != PITH_OK) return s;
    if (in->tools) {
        s = jinja_set_json(jr, "tools", in->tools, in->tools_len, 0, err, err_cap);
        if (s != PITH_OK) return s;
    } else {
        jinja_set_none(jr, "tools");
    }
    jinja_set_none(jr, "documents");
    jinja_set_bool(jr, "add_generation_prompt", in->add_generation_prompt);
    jinja_set_string(jr, "bos_token", r->bos ? r->bos : "", r->bos ? strlen(r->bos) : 0);
    jinja_set_string(jr, "eos_token", r->eos ? r->eos : "", r->eos ? strlen(r->eos) : 0);
    if (in->enable_thinking >= 0) jinja_set_bool(jr, "enable_thinking", in->enable_thinking);
    if (in->kwargs && (s = set_kwargs(jr, in->kwargs, in->kwargs_len, err, err_cap)) != PITH_OK) return s;
    jinja_set_time(jr, r->now);
    char why[400];
    s = jinja_render(jr, out, cap, len, why, sizeof why);
    if (s != PITH_OK) snprintf(err, err_cap, "%s:%s", r->name ? r->name : "template", why);
    return s;
}

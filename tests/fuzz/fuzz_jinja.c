/* fuzz_jinja - the Jinja2 interpreter on arbitrary templates. The input is
 * a template, or a template, a NUL byte and a JSON object whose keys
 * become variables; without one, a fixed conversation with a system
 * prompt, tool calls, a tool reply and tools is given. Properties besides
 * "no crash": parsing into exactly jinja_parse_bound bytes never runs out
 * of memory; every error is one line "LINE:COL: what" within the text;
 * a render stays within its limits (steps, depth, output) and renders the
 * same text twice from the same parsed template (which it only reads). */
#include "../../src/text/jinja.h"
#include "../../src/text/json.h"

#include "fuzz_common.h"

static const char conversation[] =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"Hi \\u00e9\"},"
    " {\"role\": \"assistant\", \"content\": \"\", \"reasoning_content\": \"think\", \"tool_calls\": [{\"id\": \"c1\","
    " \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": \"{\\\"x\\\": [1, 2.5, null]}\"}}]},"
    " {\"role\": \"tool\", \"tool_call_id\": \"c1\", \"content\": \"ok\"}, {\"role\": \"user\", \"content\": [{\"type\":"
    " \"text\", \"text\": \"more\"}]}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\","
    " \"description\": \"F\", \"parameters\": {\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"array\"}},"
    " \"required\": [\"x\"]}}}], \"add_generation_prompt\": true, \"bos_token\": \"<s>\", \"eos_token\": \"</s>\"}";

static _Alignas(16) uint8_t work[1 << 20];
static char out1[1 << 16], out2[1 << 16];

/* "LINE:COL: what" on one line, with LINE within the text's lines. */
static int well_formed(const char *err, const char *src, size_t len)
{
    unsigned line, col, lines = 1;
    for (size_t i = 0; i < len; i++) lines += src[i] == '\n' || (src[i] == '\r' && (i + 1 == len || src[i + 1] != '\n'));
    return sscanf(err, "%u:%u: ", &line, &col) == 2 && line >= 1 && line <= lines && col >= 1 &&
           strchr(err, '\n') == NULL;
}

static PithStatus render(const JinjaTemplate *t, const char *vars, size_t vars_len, char *out, size_t *n, char *err)
{
    JinjaLimits lim = {.max_output = sizeof out1 - 1, .max_steps = 20000, .max_depth = 16};
    JinjaRender *r = jinja_render_begin(t, work, sizeof work, &lim);
    FUZZ_ASSERT(r != NULL, "a render begins in 1 MiB");
    Json j;
    json_init(&j, vars, vars_len, "vars");
    if (json_enter(&j, '{') == 0) {
        while (json_next(&j, '}') > 0) {
            char name[64];
            size_t kl;
            if (json_key(&j, name, sizeof name - 1, &kl) < 0) break;
            name[kl] = 0;
            while (j.pos < vars_len && (vars[j.pos] == ' ' || vars[j.pos] == '\n')) j.pos++;
            size_t at = j.pos;
            if (json_skip(&j) < 0) break;
            char e[400];
            if (jinja_set_json(r, name, vars + at, j.pos - at, JINJA_JSON_TOOL_ARGUMENTS, e, sizeof e) != PITH_OK)
                FUZZ_ASSERT(strchr(e, '\n') == NULL && e[0], "one-line variable error");
        }
    }
    jinja_set_time(r, 1700000000);
    return jinja_render(r, out, sizeof out1, n, err, 400);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *parse_mem;
    static size_t parse_cap;
    const char *src = (const char *)data;
    const char *nul = memchr(src, 0, size);
    size_t len = nul ? (size_t)(nul - src) : size;
    const char *vars = nul ? nul + 1 : conversation;
    size_t vars_len = nul ? size - len - 1 : strlen(conversation);

    size_t bound = (size_t)jinja_parse_bound(len);
    if (bound > parse_cap) {
        free(parse_mem);
        parse_cap = bound;
        parse_mem = aligned_alloc(16, (bound + 15) & ~(size_t)15);
        FUZZ_ASSERT(parse_mem != NULL, "parse memory");
    }
    JinjaTemplate *t;
    char err[400];
    PithStatus st = jinja_parse(src, len, parse_mem, bound, &t, err, sizeof err);
    if (st != PITH_OK) {
        FUZZ_ASSERT(st != PITH_NO_MEMORY, "the template fits in jinja_parse_bound bytes");
        FUZZ_ASSERT(well_formed(err, src, len), "one-line parse error with its LINE:COL");
        return 0;
    }
    size_t n1, n2;
    char err2[400];
    PithStatus st1 = render(t, vars, vars_len, out1, &n1, err);
    PithStatus st2 = render(t, vars, vars_len, out2, &n2, err2);
    FUZZ_ASSERT(st1 == st2, "two renders end alike");
    if (st1 != PITH_OK) {
        FUZZ_ASSERT(well_formed(err, src, len), "one-line render error with its LINE:COL");
        FUZZ_ASSERT(strcmp(err, err2) == 0, "two renders fail alike");
        return 0;
    }
    FUZZ_ASSERT(n1 < sizeof out1 && out1[n1] == 0, "the output is within its bound and NUL-terminated");
    FUZZ_ASSERT(n1 == n2 && memcmp(out1, out2, n1) == 0, "two renders give the same text");
    return 0;
}

/* cmd_serve.c - `pith serve MODEL` (its options: serve_options below).
 *
 * An OpenAI-compatible HTTP server for one model (server.h): loaded once,
 * up to --slots requests generated together (one KV cache each), the
 * others waiting in a bounded queue.
 * Safe by default: loopback only unless --host, an optional API key on
 * every request, bounded bodies, deadlines for slow clients, every buffer
 * planned before the model loads. */
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "cli.h"
#include "../text/json.h"
#include "../server/server_api.h"

#define MAX_KEY 4096

/* The key is the first line of the file, without surrounding whitespace. */
static size_t read_key_file(const char *path, char *key, size_t cap)
{
    PortFile f;
    char err[512];
    if (port_file_open(&f, path, 0, err, sizeof err) != 0) port_die("--api-key-file: %s", err);
    if (f.size >= cap) port_die("--api-key-file: %s: longer than %zu bytes", path, cap - 1);
    size_t n = (size_t)f.size;
    if (n && port_file_read(&f, 0, key, n) != 0) port_die("--api-key-file: %s: read error", path);
    port_file_close(&f);
    size_t a = 0;
    while (a < n && (key[a] == ' ' || key[a] == '\t' || key[a] == '\r' || key[a] == '\n')) a++;
    size_t b = a;
    while (b < n && key[b] != '\n' && key[b] != '\r') b++;
    while (b > a && (key[b - 1] == ' ' || key[b - 1] == '\t')) b--;
    memmove(key, key + a, b - a);
    key[b - a] = '\0';
    if (b == a) port_die("--api-key-file: %s: the file holds no key", path);
    return b - a;
}

static void check_key(const char *key, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] <= 0x20 || (unsigned char)key[i] >= 0x7f)
            port_die("--api-key: the key must be printable ASCII without spaces");
}

/* A folder option names a folder that exists (NULL: not given). */
static void check_folder(const char *option, const char *path)
{
    char probe[4096];
    int n = path ? snprintf(probe, sizeof probe, "%s/.", path) : 0;
    if (path && (n < 0 || (size_t)n >= sizeof probe || !port_file_exists(probe)))
        port_die("%s: %s is not a folder", option, path);
}

/* The model's file name (without directories), as a JSON string. */
static void set_model_name(Server *sv, const char *path)
{
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/') base = p + 1;
    size_t n = strlen(base);
    if (n > 120) {
        n = 120;
        while (n > 0 && ((unsigned char)base[n] & 0xc0) == 0x80) n--; /* whole characters only */
    }
    json_escape(base, n, sv->model_name, sizeof sv->model_name);
}

static void plan_server(void *ctx, Plan *p)
{
    server_plan(ctx, p);
}

typedef struct {
    ServerOptions so;
    const char *key_file;
} ServeArgs;

const CliOpt serve_options[] = {
    OPT_STRING("--host ADDR\tlisten address (127.0.0.1)", ServeArgs, so.host),
    OPT_INT("--port N\tTCP port, 0 any free (8080)", ServeArgs, so.port, 0, 65535),
    OPT_STRING("--api-key KEY\tBearer KEY for all but /health (none)", ServeArgs, so.api_key),
    OPT_STRING("--api-key-file F\tthe key: F's first line", ServeArgs, key_file),
    OPT_SIZE("--max-body SIZE\tlargest request body (1M)", ServeArgs, so.max_body),
    OPT_INT("--queue N\tconnections waiting (4)", ServeArgs, so.queue, 0, 256),
    OPT_DOUBLE("--timeout S\tseconds per head, body, write (10)", ServeArgs, so.timeout, 0.1, 3600),
    OPT_INT("--slots N\trequests generated together (1)", ServeArgs, so.slots, 1, ENGINE_MAX_SLOTS),
    OPT_FLAG("--metrics\tanswer GET /metrics", ServeArgs, so.metrics, 1),
    OPT_STRING("--slot-save-path DIR\tfolder of POST /slots/ID?action=save|restore (none)", ServeArgs, so.slot_save_path),
    OPT_STRING("--cache-dir DIR\tprompts' caches kept on disk, found after restarts (none)", ServeArgs, so.cache_dir),
    OPT_SIZE("--cache-dir-size SIZE\tthe most --cache-dir's files take (4G)", ServeArgs, so.cache_dir_size),
    OPT_INCLUDE(cli_context_options),
    OPT_INCLUDE(cli_model_options),
    OPT_INCLUDE(cli_sampling_options),
    OPT_INCLUDE(cli_generation_options),
    OPT_END,
};

int cmd_serve(const CliCommand *cmd, int argc, char **argv)
{
    EngineOptions o;
    ServeArgs a = {.so = {.host = "127.0.0.1", .port = 8080, .max_body = 1 << 20, .queue = 4, .timeout = 10,
                          .cache_dir_size = 4ull << 30}};
    cli_parse(cmd, argc, argv, &o, &a);
    ServerOptions so = a.so;
    const char *key_file = a.key_file;
    static char key[MAX_KEY];
    if (so.max_body > CHAT_JSON_MAX_BYTES) port_die("--max-body: at most %zu bytes", CHAT_JSON_MAX_BYTES);
    /* which of --temp, --top-k, --top-p, --min-p were given (a request's own values win over them) */
    for (int k = 0; k < 4; k++) so.sampling_cli[k] = o.sampling_set[ENGINE_SET_TEMP + k];
    if (so.api_key && key_file) port_die("--api-key-file: give --api-key or --api-key-file, not both");
    if (key_file) {
        so.api_key_len = read_key_file(key_file, key, sizeof key);
        so.api_key = key;
    } else if (so.api_key) {
        so.api_key_len = strlen(so.api_key);
        if (so.api_key_len == 0) port_die("--api-key: the key is empty");
    }
    if (so.api_key) check_key(so.api_key, so.api_key_len);
    check_folder("--slot-save-path", so.slot_save_path);
    check_folder("--cache-dir", so.cache_dir);

    /* The prompt text read at once: the body, but no more than a context
     * can plausibly hold (SERVE_BYTES_PER_TOKEN per token), plus the
     * template's own text. */
    uint64_t ctx = o.n_ctx ? (uint64_t)o.n_ctx : PITH_DEFAULT_CTX;
    uint64_t text = ctx * SERVE_BYTES_PER_TOKEN;
    if (text > so.max_body) text = so.max_body;
    o.max_text = text + 64 * 1024;
    so.max_text = o.max_text;
    o.no_shift = 1; /* a full context ends the reply ("length"), never drops the prompt */
    o.grammar = 1;  /* response_format and forced tool calls: one grammar state per slot */
    o.tool_calls = 1; /* and a tool-call splitter per slot */
    o.token_probs = 1; /* and room for a reply's log probabilities per slot */
    o.slots = (uint32_t)(so.slots > 0 ? so.slots : 1);
    if (o.batch < (int64_t)o.slots)
        port_die("-b: a step holds a token of each of the %u slots: -b %lld is too small", o.slots, (long long)o.batch);

    static Engine e;
    static Server sv;
    /* The server's buffers join the engine's one arena. */
    o.plan_extra = plan_server;
    o.plan_extra_ctx = &so;
    cli_open_engine(&e, &o);
    char err[512];
    if (server_init(&sv, &so, &e, err, sizeof err) != 0) port_die("%s", err);
    api_init(&sv);
    sv.dispatch = api_dispatch;
    sv.generate = api_generate;
    sv.step = api_step;
    sv.idle = api_idle;
    Plan sp;
    plan_init(&sp);
    server_plan(&so, &sp);
    sv.planned = sp.total;
    sv.cli_sampling = e.opt.sampling;
    set_model_name(&sv, o.model_path);
    cli_template_note(&e, "ChatML renders chat requests (--template NAME chooses another)");
    if (!sv.loopback && !so.api_key)
        port_err("warning: listening on %s without --api-key: anyone who can reach this address can use the model\n",
                 so.host);
    port_err("pith serve: %s on http://%s%s%s:%d/v1 (%d slot%s, context %u each, queue %d, max body %llu bytes, arena %.1f MiB, of which "
             "server %.1f MiB)\n",
             sv.model_name, strchr(so.host, ':') ? "[" : "", so.host, strchr(so.host, ':') ? "]" : "", sv.bound_port,
             sv.n_slots, sv.n_slots > 1 ? "s" : "", e.n_ctx, so.queue, (unsigned long long)so.max_body, (double)e.plan.total / 1048576.0,
             (double)sv.planned / 1048576.0);
    server_run(&sv);
}

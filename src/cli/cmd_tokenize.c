/* cmd_tokenize.c - `pith tokenize MODEL` (its options: tokenize_options
 * below): prints the token ids of a text, space
 * separated on one line, or one "ID 'piece'" line per token with --pieces.
 * Plans and maps one arena: the GGUF index, the tokenizer, the text, the ids. */
#include <string.h>

#include "../../port/port.h"
#include "../arena/arena.h"
#include "cli.h"
#include "../gguf/gguf.h"
#include "../text/tokenizer.h"
#include "../text/unicode.h"

#define USAGE "see pith help tokenize"

/* Prints a piece between quotes: valid UTF-8 as is, control bytes, quotes,
 * backslashes and invalid bytes escaped. */
static void print_escaped(const char *piece, size_t len)
{
    const uint8_t *s = (const uint8_t *)piece;
    port_out("'");
    for (size_t i = 0; i < len;) {
        uint8_t c = s[i];
        if (c == '\n') port_out("\\n");
        else if (c == '\t') port_out("\\t");
        else if (c == '\r') port_out("\\r");
        else if (c == '\\' || c == '\'') port_out("\\%c", c);
        else if (c >= 0x20 && c < 0x7F) port_out("%c", c);
        else if (c >= 0x80 && utf8_strict_len(s + i, len - i) > 0) {
            int l = utf8_strict_len(s + i, len - i);
            port_out("%.*s", l, piece + i);
            i += (size_t)l;
            continue;
        } else port_out("\\x%02X", c);
        i++;
    }
    port_out("'");
}

typedef struct {
    const char *text, *file;
    int pieces, parse_special, timing;
} TokenizeArgs;

const CliOpt tokenize_options[] = {
    OPT_POSITIONAL("TEXT", TokenizeArgs, text),
    OPT_STRING("--file F\ttokenize a file's text", TokenizeArgs, file),
    OPT_FLAG("--pieces\teach id with its text", TokenizeArgs, pieces, 1),
    OPT_FLAG("--no-special\t<|im_start|> etc. as plain text", TokenizeArgs, parse_special, 0),
    OPT_FLAG("--time\tload, encode times to stderr", TokenizeArgs, timing, 1),
    OPT_INCLUDE(cli_file_options),
    OPT_END,
};

int cmd_tokenize(const CliCommand *cmd, int argc, char **argv)
{
    EngineOptions o;
    TokenizeArgs a = {.parse_special = 1};
    cli_parse(cmd, argc, argv, &o, &a);
    const char *model = o.model_path, *text = a.text, *file = a.file;
    int pieces = a.pieces, parse_special = a.parse_special, use_mmap = o.use_mmap, timing = a.timing;
    if (!text && !file) port_die("tokenize: missing TEXT or --file F (" USAGE ")");
    if (text && file) port_die("tokenize: give either TEXT or --file F, not both");

    /* the text: argv, or a file read through port */
    PortFile tf;
    uint64_t len = text ? strlen(text) : 0;
    if (file) {
        char why[256];
        if (port_file_open(&tf, file, 0, why, sizeof why) != 0) port_die("%s", why); /* the reason names the file */
        len = tf.size;
        if (len > TOKENIZER_MAX_TEXT)
            port_die("%s: %llu bytes is more than tokenize accepts (%llu)", file, (unsigned long long)len,
                     TOKENIZER_MAX_TEXT);
    }

    Gguf g;
    GgufError err;
    if (gguf_open(&g, model, use_mmap, NULL, &err) != 0) port_die("%s", err.msg);
    Plan plan;
    plan_init(&plan);
    gguf_plan(&g, &plan);
    if (tokenizer_plan(&g, len, &plan, &err) != 0) port_die("%s", err.msg);
    uint64_t max_ids = 3 * len + 1;
    if (file) plan_add(&plan, "text", len + 1);
    plan_add(&plan, "token ids", plan_mul(&plan, max_ids, 4));
    Arena arena;
    cli_map_plan(&arena, &plan, model);
    if (gguf_index(&g, &arena, &err) != 0) port_die("%s", err.msg);

    double t0 = port_seconds();
    Tokenizer tok;
    if (tokenizer_load(&tok, &g, len, &arena, &err) != 0) port_die("%s", err.msg);
    double t1 = port_seconds();

    if (file) {
        char *buf = arena_take(&arena, len + 1);
        if (!buf) port_die("%s: internal error: arena too small", model);
        if (len && port_file_read(&tf, 0, buf, (size_t)len) != 0) port_die("%s: read error", file);
        port_file_close(&tf);
        text = buf;
    }
    int32_t *ids = arena_take(&arena, max_ids * 4);
    if (!ids) port_die("%s: internal error: arena too small", model);
    int n = tokenizer_encode(&tok, text, (size_t)len, parse_special, ids, (int)max_ids);
    double t2 = port_seconds();
    if (n < 0) port_die("tokenize: internal error: text does not fit the planned buffers");

    if (pieces) {
        for (int i = 0; i < n; i++) {
            size_t pl;
            const char *p = tokenizer_piece(&tok, ids[i], &pl);
            port_out("%d ", ids[i]);
            print_escaped(p, pl);
            port_out("\n");
        }
    } else {
        for (int i = 0; i < n; i++) port_out(i ? " %d" : "%d", ids[i]);
        port_out("\n");
    }
    port_out_flush();
    if (timing)
        port_err("tokenize: %d tokens from %llu bytes; tokenizer load %.3f s, encode %.3f s\n", n,
             (unsigned long long)len, t1 - t0, t2 - t1);
    gguf_close(&g);
    arena_unmap(&arena);
    return 0;
}

/* cli_grammar.c - --grammar FILE and --json-schema FILE for run and chat:
 * the file is read into the session's planned buffer, a schema translated
 * to GBNF (text/json_schema.h), the grammar compiled; anything wrong is one
 * line naming the file and exit 2. */
#include <string.h>

#include "../../port/port.h"
#include "../text/json_schema.h"
#include "cli.h"

void cli_grammar_load(Session *s)
{
    const SessionOptions *o = &s->opt;
    if (!o->grammar_file) return;
    PortFile f;
    char why[512];
    if (port_file_open(&f, o->grammar_file, 0, why, sizeof why) != 0) port_die("%s", why);
    if (f.size > SESSION_GRAMMAR_TEXT)
        port_die("%s: %llu bytes; a %s is at most %d bytes", o->grammar_file, (unsigned long long)f.size,
                 o->grammar_is_schema ? "schema" : "grammar", SESSION_GRAMMAR_TEXT);
    size_t len = (size_t)f.size;
    if (len && port_file_read(&f, 0, s->grammar_src, len) != 0) port_die("%s: read error", o->grammar_file);
    port_file_close(&f);
    s->grammar_src[len] = '\0';
    const char *text = s->grammar_src;
    if (o->grammar_is_schema) {
        int64_t n = json_schema_grammar(s->grammar_src, len, o->grammar_file, s->grammar_text, SESSION_GRAMMAR_TEXT + 1,
                                        why, sizeof why);
        if (n < 0) port_die("%s", why);
        text = s->grammar_text;
        len = (size_t)n;
    }
    if (session_set_grammar(s, text, len, o->grammar_file) != 0) cli_session_die(s);
}

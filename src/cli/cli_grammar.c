/* cli_grammar.c - --grammar FILE and --json-schema FILE for run and chat:
 * the file read into the engine's planned buffer, a schema translated to
 * GBNF (engine_read_grammar), the grammar compiled into the slot; anything
 * wrong is one line naming the file and exit 2. */
#include "cli.h"

void cli_grammar_load(Engine *e, Slot *s)
{
    const char *text;
    size_t len;
    if (engine_read_grammar(e, &text, &len) != 0) cli_engine_die(e);
    if (text && slot_set_grammar(e, s, text, len, e->opt.grammar_file) != 0) cli_slot_die(s);
}

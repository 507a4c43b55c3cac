/* This folder: src/cli/ - the command line: one cmd_*.c per command. The
 * only code that prints an error and ends the process (port_die); it may
 * call every other folder and port/. */
/* cli.h - the command line: dispatch and argument helpers shared by commands.
 *
 * Every command is `int cmd_NAME(int argc, char **argv)` where argv[0] is
 * the command name. Bad arguments end the program through port_die (one
 * line, exit status 2). */
#ifndef PITH_CLI_H
#define PITH_CLI_H

#include <stdint.h>

#include "../arena/arena.h"
#include "../engine/engine.h"

int pith_main(int argc, char **argv);

int cmd_inspect(int argc, char **argv);   /* cmd_inspect.c */
int cmd_tokenize(int argc, char **argv);  /* cmd_tokenize.c */
int cmd_template(int argc, char **argv);  /* cmd_template.c */
int cmd_logits(int argc, char **argv);    /* cmd_logits.c */
int cmd_run(int argc, char **argv);       /* cmd_run.c */
int cmd_chat(int argc, char **argv);      /* cmd_chat.c */
int cmd_bench(int argc, char **argv);     /* cmd_bench.c */
int cmd_serve(int argc, char **argv);     /* cmd_serve.c */

/* cli_help.c: the commands' names and help. */
#define CLI_N_COMMANDS 8
void cli_usage(const char *version);  /* pith --help: the commands */
void cli_help(int k);                 /* command k's options, defaults, example */
int cli_command_index(const char *name); /* dies naming an unknown command */

/* An option argv[i] that `cmd` does not take: --help or -h prints the
 * command's help and exits 0; anything else dies "unknown option". */
_Noreturn void cli_unknown(const char *cmd, const char *arg);


/* Argument helpers: each dies with "pith: <flag>: <what is wrong>" on bad input. */
/* Returns argv[*i + 1] and advances *i, or dies if the value is missing. */
const char *cli_value(int argc, char **argv, int *i);
int64_t cli_int(const char *flag, const char *text, int64_t min, int64_t max);
double cli_float(const char *flag, const char *text, double min, double max);
/* "300M", "2G", "4096" (bytes; K/M/G are powers of 1024). */
uint64_t cli_size(const char *flag, const char *text);
/* Comma-separated ids in [0, limit): stores up to cap, returns the count. */
int cli_ids(const char *flag, const char *text, int32_t *out, int cap, int64_t limit);
/* Counts comma-separated items (to size buffers before cli_ids). */
int cli_count_ids(const char *text);

/* Handles argv[*i] if it is an option every generating command shares
 * (-c -t -b --kv-type --no-mmap --temp --top-k --top-p --min-p
 * --repeat-penalty --repeat-last-n --presence-penalty --seed --trace
 * --no-think --plan --keep --no-shift --ignore-eos --mem --load --stream-window
 * --template).
 * Returns 1 if it did, 0 if argv[*i] is not one. */
int cli_session_option(EngineOptions *o, int argc, char **argv, int *i);
/* --grammar FILE / --json-schema FILE (cli_args.c): 1 if argv[*i] was one. */
void cli_grammar_option(EngineOptions *o, const char *flag, const char *file);
/* After cli_open_engine: reads, translates and compiles the grammar into
 * slot s, or exits 2 with one line. Nothing without --grammar/--json-schema. */
void cli_grammar_load(Engine *e, Slot *s);
/* engine_open, as every command opens a model: the planner's note on
 * stderr; with --plan the table on stdout and exit (0, or 2 with the
 * refusal); any failure one line, exit 2. */
void cli_open_engine(Engine *e, const EngineOptions *o);
/* The model's chat template is none pith knows, or there is none, and no
 * --template chose one: says so on stderr, with what happens instead. */
void cli_template_note(const Engine *e, const char *fallback);
/* A failed engine call: "pith: <e->err>", exit 2. */
_Noreturn void cli_engine_die(const Engine *e);
/* A failed slot call: "pith: <s->err>", exit 2. */
_Noreturn void cli_slot_die(const Slot *s);
/* A command's own buffer in the engine's arena (EngineOptions.plan_extra
 * = cli_plan_item, plan_extra_ctx = a CliPlanItem). */
typedef struct {
    const char *what;
    uint64_t bytes;
} CliPlanItem;
void cli_plan_item(void *ctx, Plan *p);
/* Maps the one arena for a finished plan and initialises `a`; dies with
 * one line naming `owner` (a file) if the plan overflowed or the system
 * refuses the memory. */
void cli_map_plan(Arena *a, const Plan *p, const char *owner);

#endif

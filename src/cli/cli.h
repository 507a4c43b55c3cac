/* This folder: src/cli/ - the command line: one cmd_*.c per command. The
 * only code that prints an error and ends the process (port_die); it may
 * call every other folder and port/. */
/* cli.h - the command line: the commands table, the option tables and the
 * one parser that walks them, and helpers shared by commands.
 *
 * Every command is `int cmd_NAME(const CliCommand *cmd, int argc, char
 * **argv)`, given its row of the commands table, argv[0] its name; it
 * starts with cli_parse. Bad arguments end the program
 * through port_die (one line, exit status 2). */
#ifndef PITH_CLI_H
#define PITH_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "../arena/arena.h"
#include "../engine/engine.h"

int pith_main(int argc, char **argv);

/* ---- Options: one table per command ------------------------------------
 *
 * A row is one option as `pith help CMD` prints it. Its spec is the help
 * line, "NAMES [ARG]\tmeaning (default)": NAMES one or more -x/--long joined
 * by ", ", an ARG when the option takes a value. The parser (cli_parse), the
 * help (cli_help), the man page (man/mkman.sh reads the help) and
 * README's option rows (tests/tools/main_optdoc.c) are all made from the
 * rows. A command's table lists its own rows and includes shared ones
 * (cli_options.c: the engine's groups) by reference; when two rows of a
 * command have a name in common, the first is the one (a command's own -b
 * with its own default before an included group's). */
typedef enum {
    CLI_END,        /* ends a table */
    CLI_INCLUDE,    /* how.rows: another table's rows, here */
    CLI_FLAG,       /* int = value; a second name (--echo, --no-echo) stores 0 */
    CLI_INT,        /* int in how.ints */
    CLI_INT64,      /* int64_t in how.ints */
    CLI_FLOAT,      /* float in how.reals */
    CLI_DOUBLE,     /* double in how.reals */
    CLI_SIZE,       /* uint64_t bytes: "300M", "2G", "4096" */
    CLI_STRING,     /* const char *: the value itself */
    CLI_CHOICE,     /* int: the value's index in ARG's list "a|b|c" */
    CLI_CALL,       /* how.call->set does what a value needs beyond a store */
    CLI_POSITIONAL, /* const char *: an argument after MODEL that is not an option (spec: its name) */
} CliKind;
#define CLI_KIND 0x7f
#define CLI_ENGINE 0x80 /* kind bit: the value is in the engine's options, not the command's own */

typedef struct {
    int64_t lo, hi;
} CliInts;
typedef struct {
    double lo, hi;
} CliReals;
typedef struct {
    void (*set)(void *base, const char *flag, const char *value);
    const char *(*values)(void); /* the values it takes, for a help line of their own; or NULL */
} CliCall;
typedef struct CliOpt CliOpt;
struct CliOpt {
    const char *spec;
    union {
        const CliInts *ints;
        const CliReals *reals;
        const CliCall *call;
        const CliOpt *rows;
    } how;
    uint16_t at;    /* the value's offset in the command's options struct (or the engine's) */
    uint16_t seen;  /* 1 + the offset of an int set to 1 when the option is given; 0: none */
    uint8_t kind;   /* CliKind, | CLI_ENGINE */
    uint8_t value;  /* CLI_FLAG's */
};

/* Rows: T is the struct the value goes to, f its field (of the type the
 * kind stores: checked at compile time). The engine's options are
 * T = EngineOptions. */
#define CLI_AT(T, f, type) ((uint16_t)(offsetof(T, f) + 0 * sizeof(_Generic(((T *)0)->f, type: 1))))
#define CLI_BASE(T) _Generic((T *)0, EngineOptions *: CLI_ENGINE, default: 0)
#define CLI_ROW(spec, how, T, f, type, kind, value) {spec, {how}, CLI_AT(T, f, type), 0, (kind) | CLI_BASE(T), value}
#define OPT_FLAG(spec, T, f, v) CLI_ROW(spec, .rows = 0, T, f, int, CLI_FLAG, v)
#define OPT_INT(spec, T, f, lo, hi) CLI_ROW(spec, .ints = (&(const CliInts){lo, hi}), T, f, int, CLI_INT, 0)
#define OPT_INT64(spec, T, f, lo, hi) CLI_ROW(spec, .ints = (&(const CliInts){lo, hi}), T, f, int64_t, CLI_INT64, 0)
#define OPT_FLOAT(spec, T, f, lo, hi) CLI_ROW(spec, .reals = (&(const CliReals){lo, hi}), T, f, float, CLI_FLOAT, 0)
#define OPT_DOUBLE(spec, T, f, lo, hi) CLI_ROW(spec, .reals = (&(const CliReals){lo, hi}), T, f, double, CLI_DOUBLE, 0)
#define OPT_SIZE(spec, T, f) CLI_ROW(spec, .rows = 0, T, f, uint64_t, CLI_SIZE, 0)
#define OPT_STRING(spec, T, f) CLI_ROW(spec, .rows = 0, T, f, const char *, CLI_STRING, 0)
#define OPT_CHOICE(spec, T, f, type) CLI_ROW(spec, .rows = 0, T, f, type, CLI_CHOICE, 0)
#define OPT_CALL(spec, T, set, values) {spec, {.call = (&(const CliCall){set, values})}, 0, 0, CLI_CALL | CLI_BASE(T), 0}
#define OPT_POSITIONAL(name, T, f) CLI_ROW(name, .rows = 0, T, f, const char *, CLI_POSITIONAL, 0)
#define OPT_INCLUDE(table) {0, {.rows = table}, 0, 0, CLI_INCLUDE, 0}
#define OPT_END {0, {0}, 0, 0, CLI_END, 0}

/* The engine's option groups (cli_options.c), included by the commands. */
extern const CliOpt cli_file_options[];       /* --no-mmap */
extern const CliOpt cli_model_options[];      /* -t -b, the file's, --mem --load --stream-window --plan */
extern const CliOpt cli_context_options[];    /* -c --kv-type */
extern const CliOpt cli_sampling_options[];   /* --temp ... --seed */
extern const CliOpt cli_grammar_options[];    /* --grammar --json-schema */
extern const CliOpt cli_template_options[];   /* --think --no-think --template */
extern const CliOpt cli_generation_options[]; /* --trace, the template's, --keep --no-shift --ignore-eos */

/* A command: `pith help NAME` prints "pith NAME: summary", "usage: pith
 * NAME usage", its options and "pith NAME model.gguf example"; run is
 * called with its row and argv[0] its name. */
typedef struct CliCommand CliCommand;
struct CliCommand {
    const char *name, *summary, *usage, *example;
    const CliOpt *options;
    int (*run)(const CliCommand *cmd, int argc, char **argv);
};

/* cli.c: the commands table (ends with a NULL name), the one with that
 * name (NULL if none), the list of pith --help. */
extern const CliCommand cli_commands[];
const CliCommand *cli_command(const char *name);
void cli_usage(const char *version);

/* Each command's function and option table (cmd_NAME.c). */
int cmd_inspect(const CliCommand *cmd, int argc, char **argv);
int cmd_tokenize(const CliCommand *cmd, int argc, char **argv);
int cmd_template(const CliCommand *cmd, int argc, char **argv);
int cmd_logits(const CliCommand *cmd, int argc, char **argv);
int cmd_run(const CliCommand *cmd, int argc, char **argv);
int cmd_chat(const CliCommand *cmd, int argc, char **argv);
int cmd_bench(const CliCommand *cmd, int argc, char **argv);
int cmd_serve(const CliCommand *cmd, int argc, char **argv);
extern const CliOpt inspect_options[], tokenize_options[], template_options[], logits_options[], run_options[],
    chat_options[], bench_options[], serve_options[];

/* cli_parse.c: the tables walked. Parses argv[1..argc) by cmd's table:
 * engine from engine_defaults, then what is given; MODEL, the first
 * argument that is no option, to engine->model_path. own: the command's
 * own options struct, its defaults set by the caller. --help or -h
 * anywhere prints the help and exits 0; a bad argument or a missing MODEL
 * is one line and exit 2. */
void cli_parse(const CliCommand *cmd, int argc, char **argv, EngineOptions *engine, void *own);
/* The command's help: its options, defaults, example. */
void cli_help(const CliCommand *cmd);
/* The row of the table for option `name` (the first one), or NULL. */
const CliOpt *cli_find(const CliOpt *table, const char *name);
/* Calls visit for each option row of the table that the parser uses, in
 * the help's order (included rows in their place; positional rows and
 * rows a first namesake hides are skipped). */
void cli_each_option(const CliOpt *table, void (*visit)(void *ctx, const CliOpt *row), void *ctx);

/* Argument helpers: each dies with "pith: <flag>: <what is wrong>" on bad input. */
int64_t cli_int(const char *flag, const char *text, int64_t min, int64_t max);
double cli_float(const char *flag, const char *text, double min, double max);
/* "300M", "2G", "4096" (bytes; K/M/G are powers of 1024). */
uint64_t cli_size(const char *flag, const char *text);
/* Comma-separated ids in [0, limit): stores up to cap, returns the count. */
int cli_ids(const char *flag, const char *text, int32_t *out, int cap, int64_t limit);
/* Counts comma-separated items (to size buffers before cli_ids). */
int cli_count_ids(const char *text);

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
/* "; drafted D, accepted A (R%)" of the slot's reply with --spec-type, else
 * "": for run's and chat's generation lines. */
const char *cli_spec_stats(const Engine *e, const Slot *s, char *buf, size_t cap);
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
/* A text file as a prompt (cli_text.c): its size before the plan (at most
 * CLI_TEXT_MAX bytes; missing, unreadable or empty: exit 2), then its text
 * taken from the arena (size + 1 bytes planned), NUL-terminated, one final
 * newline dropped, its length in *len. */
#define CLI_TEXT_MAX (256u << 20)
uint64_t cli_text_size(const char *flag, const char *path);
const char *cli_text_read(Arena *arena, const char *flag, const char *path, uint64_t size, size_t *len);
/* --prompt-cache FILE (cli_cache.c): cli_cache_load after the engine is
 * open and before the first prompt (returns the engine's shift count, for
 * cli_cache_save); cli_cache_save when the command ends, if the slot holds
 * more than twice the `loaded` positions (the prompt's cached ones). Notes
 * on stderr; the command goes on. */
uint32_t cli_cache_load(Engine *e, Slot *s, const char *path);
void cli_cache_save(Engine *e, Slot *s, const char *path, uint32_t shifts, uint32_t loaded);
/* Maps the one arena for a finished plan and initialises `a`; dies with
 * one line naming `owner` (a file) if the plan overflowed or the system
 * refuses the memory. */
void cli_map_plan(Arena *a, const Plan *p, const char *owner);

#endif

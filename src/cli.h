/* cli.h - the command line: dispatch and argument helpers shared by commands.
 *
 * Every command is `int cmd_NAME(int argc, char **argv)` where argv[0] is
 * the command name. Bad arguments end the program through port_die (one
 * line, exit status 2). */
#ifndef PITH_CLI_H
#define PITH_CLI_H

#include <stdint.h>

int pith_main(int argc, char **argv);

int cmd_inspect(int argc, char **argv);   /* cmd_inspect.c */
int cmd_tokenize(int argc, char **argv);  /* cmd_tokenize.c */
int cmd_template(int argc, char **argv);  /* cmd_template.c */
int cmd_logits(int argc, char **argv);    /* cmd_logits.c */
int cmd_run(int argc, char **argv);       /* cmd_run.c */
int cmd_chat(int argc, char **argv);      /* cmd_chat.c */
int cmd_bench(int argc, char **argv);     /* cmd_bench.c */
int cmd_serve(int argc, char **argv);     /* cmd_serve.c */

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

#endif

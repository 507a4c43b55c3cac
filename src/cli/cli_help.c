/* The help of every command (pith help COMMAND, COMMAND --help), the
 * unknown-option error that points to it, and the system lines of
 * --version and --plan (cli.h). Apart from cli.c, which calls the
 * commands, so that the commands can call this without a circle. */
#include "cli.h"

#include <string.h>

#include "../../port/port.h"
#include "../text/chat.h"

/* The commands, in the order of cli.c's table and of the bits below. */
static const char *const commands[CLI_N_COMMANDS] = {"inspect", "tokenize", "template", "logits",
                                                      "run",     "chat",     "bench",    "serve"};

/* Every command's help, one line each: a byte with a bit per command the
 * line belongs to (bit k: commands[k]), then the text. A command's first
 * line is its usage ("ARGS\twhat it does"); then its options ("OPTION
 * ARG\tmeaning (default)"); a line starting with '$' is its example. The
 * man page (tests/mkman.sh) and README's tables are checked against this
 * text (tests/t_options.sh). Terse: it is in every binary. */
#define I "\001"
#define K "\002"
#define T "\004"
#define L "\010"
#define R "\020"
#define C "\040"
#define B "\100"
#define S "\200"
#define RCS "\260" /* the session options of run, chat and serve */
#define LRCS "\270"
#define LRCBS "\370"
static const char help_text[] =
    I " MODEL [options]\twhat a GGUF file holds\n"
    K " MODEL TEXT | --file F [options]\ttext to token ids\n"
    T " MODEL --messages FILE [options]\tthe chat text a template renders\n"
    L " MODEL --prompt-ids 1,2,3 --out FILE.f32 [options]\tlogits of every position\n"
    R " MODEL -p TEXT [options]\tgenerate from one prompt\n"
    C " MODEL [options]\tinteractive chat (a pipe: a line per message)\n"
    B " MODEL [options]\tprompt and generation speed\n"
    S " MODEL [options]\tOpenAI HTTP API\n"
    I "--tensors\tthe tensor table too\n" I "--key KEY\tone metadata value\n"
    K "--file F\ttokenize a file's text\n" K "--pieces\teach id with its text\n"
    K "--no-special\t<|im_start|> etc. as plain text\n" K "--time\tload, encode times to stderr\n"
    T "--messages FILE\tJSON array of {role, content}\n" T "--no-generation-prompt\tno open assistant turn\n"
    L "--out FILE\tfloat32 [positions][vocab]\n" R "-p, --prompt TEXT\tthe prompt\n"
    "\030--prompt-ids 1,2,3\ttoken ids, fed exactly\n" R "--print-ids\tgenerated ids only, on stdout\n"
    R "--raw\tno chat template\n" R "--echo, --no-echo\tprint a raw prompt first (on a terminal)\n"
    "\060--system TEXT\ta system turn first\n" R "-n, --n-predict N\ttokens to generate (256)\n"
    C "-n, --n-predict N\tlongest reply (2048)\n" C "--ids-out FILE\tids of every turn\n"
    B "-p N\tprompt tokens (128)\n" B "-n N\tgenerated tokens (32)\n" B "-r N\trepetitions (3)\n"
    B "--ref\treference C kernels\n" B "--no-avx512\tAVX2 kernels on an AVX-512 CPU\n"
    S "--host ADDR\tlisten address (127.0.0.1)\n" S "--port N\tTCP port, 0 any free (8080)\n"
    S "--api-key KEY\tBearer KEY for all but /health (none)\n" S "--api-key-file F\tthe key: F's first line\n"
    S "--max-body SIZE\tlargest request body (1M)\n" S "--queue N\tconnections waiting (4)\n"
    S "--timeout S\tseconds per head, body, write (10)\n" S "--slots N\trequests generated together (1)\n"
    S "--metrics\tanswer GET /metrics\n"
    LRCS "-c, --ctx N\tKV cache tokens (board's, model's if less)\n"
    LRCBS "-t, --threads N\tthreads (board's, else cores)\n"
    "\360-b, --batch N\tprompt tokens a step (64)\n" L "-b, --batch N\tprompt tokens a step (32)\n" LRCS "--kv-type f32|f16|q8_0\tKV cache type (f16)\n"
    "\377--no-mmap\tread the file, do not map it\n" LRCBS "--mem SIZE\tmemory budget (board's, else 75% RAM)\n"
    LRCBS "--load mmap|read|stream\thow weights are reached (planned)\n"
    LRCBS "--stream-window SIZE\tstream window (smallest)\n" B "--keep-cache\tstream: keep the page cache\n"
    "\360--plan\tprint the memory plan, exit\n" "\011--plan\tprint the memory plan too\n" RCS "--temp T\t0 greedy (0.6; 0.7 no-think)\n"
    RCS "--top-k K\t0 off (20)\n" RCS "--top-p P\t1 off (0.95; 0.8 no-think)\n" RCS "--min-p P\t0 off (0)\n"
    RCS "--repeat-penalty F\t1 off (1)\n" RCS "--repeat-last-n N\twindow of penalties (64)\n"
    RCS "--presence-penalty F\t(0)\n" RCS "--frequency-penalty F\t(0)\n" RCS "--seed S\tsampler seed (clock)\n"
    "\060--grammar FILE\tGBNF grammar the reply must match\n" "\060--json-schema FILE\tJSON Schema the reply must match\n"
    RCS "--trace FILE\ta JSON line per token\n" "\264--think\tthinking on (default: the template's)\n" "\264--no-think\tthinking off\n"
    "\264--template NAME\tinstead of the model's:\n" RCS "--keep N\ttokens kept when the context shifts (0)\n"
    RCS "--no-shift\tstop when the context is full\n" RCS "--ignore-eos\tgo on past end of generation\n"
    I "$ --key general.name\n" K "$ 'Hi there' --pieces\n" T "$ --messages m.json --no-think\n"
    L "$ --prompt-ids 1,2 --out l.f32\n" R "$ -p 'Why is the sky blue?' --no-think\n"
    C "$ --system 'Be brief' -c 2048\n" B "$ -p 64 -n 64 -t 4\n" S "$ --host 0.0.0.0 --api-key-file ~/.pith-key\n";

/* Prints command k's help (all == 0: its line of the command list). */
static void help(int k, int all)
{
    const char *name = commands[k];
    int first = 1;
    for (const char *p = help_text; *p;) {
        unsigned mask = (unsigned char)*p++;
        const char *e = strchr(p, '\n');
        int n = (int)(e - p);
        const char *tab = memchr(p, '\t', (size_t)n);
        int w = tab ? (int)(tab - p) : n, rest = tab ? n - w - 1 : 0;
        if (mask >> k & 1) {
            if (first && !all) {
                port_out("  %-10s%.*s\n", name, rest, tab + 1);
                return;
            }
            if (first) port_out("pith %s: %.*s\nusage: pith %s%.*s\noptions:\n", name, rest, tab + 1, name, w, p);
            else if (*p == '$')
                port_out("  %-24s %s\nexample:\n  pith %s model.gguf%.*s\n", "-h, --help", "this help", name, n - 1, p + 1);
            else port_out("  %-24.*s %.*s\n", w, p, rest, tab + 1);
            if (!first && !strncmp(p, "--template", 10)) port_out("  %-24s %s\n", "", chat_template_names());
            first = 0;
        }
        p = e + 1;
    }
}

void cli_usage(const char *version)
{
    port_out("pith %s - run GGUF language models on small boards\n\nusage: pith COMMAND MODEL [options]\n", version);
    for (int k = 0; k < CLI_N_COMMANDS; k++) help(k, 0);
    port_out("  help COMMAND, COMMAND --help: its options\n  --version: build, board, memory, kernels\n");
}

void cli_help(int k)
{
    help(k, 1);
}

int cli_command_index(const char *name)
{
    for (int k = 0; k < CLI_N_COMMANDS; k++)
        if (!strcmp(name, commands[k])) return k;
    port_die("unknown command '%s' (try pith --help)", name);
}

_Noreturn void cli_unknown(const char *cmd, const char *arg)
{
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
        help(cli_command_index(cmd), 1);
        port_exit(0);
    }
    port_die("%s: unknown option for %s (see pith help %s)", arg, cmd, cmd);
}

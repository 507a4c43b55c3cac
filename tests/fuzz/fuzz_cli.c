/* fuzz_cli - the command line: pith_main with an argv made from the input
 * (arguments separated by NUL bytes, at most 48; '/' is replaced so no
 * argument can name a file outside the harness's empty directory).
 *
 * Every command reports bad arguments through port_die, which exits. To
 * fuzz in process, this harness is linked without port/output.c and
 * provides the output functions itself: output is dropped, and port_die and
 * port_exit jump back here with longjmp. That is sound because, in an empty
 * directory, every command fails at the latest when it opens its model
 * (nothing exists), before it maps an arena or holds a file: a die only
 * ever unwinds argument parsing. --trace/--ids-out/--out files are created
 * after the model loaded, so never. */
#include <setjmp.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>

#include "../../port/port.h"
#include "../../src/cli/cli.h"

#include "fuzz_common.h"

#define MAX_ARGS 48

static jmp_buf back;
static int dies;

int port_out(const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap); /* still formats: catches bad varargs under UBSan */
    va_end(ap);
    return n;
}

int port_err(const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return n;
}

int port_out_bytes(const void *bytes, size_t n)
{
    (void)bytes, (void)n;
    return 0;
}

void port_out_flush(void)
{
}

_Noreturn void port_die(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* One line is port_die's job (port/output.c turns control bytes of
     * the message into '?'); here: there is a message. */
    FUZZ_ASSERT(n > 0, "an error has a message");
    dies++;
    longjmp(back, 2);
}

_Noreturn void port_exit(int status)
{
    longjmp(back, 3 + (status != 0));
}

double port_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* No terminal here: progress is never shown. */
void port_progress(const char *what, uint64_t done, uint64_t total, int bytes)
{
    (void)what, (void)done, (void)total, (void)bytes;
}

void port_progress_end(void)
{
}

static char empty_dir[256];

/* At exit: the directory is empty unless a command created a file, which
 * would be a finding of its own (rmdir then fails and leaves it to see). */
static void remove_empty_dir(void)
{
    if (chdir("/") == 0) (void)rmdir(empty_dir);
}

static void enter_empty_dir(void)
{
    static int done;
    if (done) return;
    done = 1;
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(empty_dir, sizeof empty_dir, "%s/pith-fuzz-cli-%d", base, (int)getpid());
    if (mkdir(empty_dir, 0700) != 0 || chdir(empty_dir) != 0) {
        fprintf(stderr, "fuzz_cli: cannot make %s\n", empty_dir);
        abort();
    }
    atexit(remove_empty_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enter_empty_dir();
    static char text[1 << 16];
    static char *argv[MAX_ARGS + 2];
    if (size >= sizeof text) size = sizeof text - 1;
    memcpy(text, data, size);
    text[size] = '\0';
    for (size_t i = 0; i < size; i++)
        if (text[i] == '/') text[i] = '_';
    int argc = 0;
    argv[argc++] = "pith";
    for (size_t i = 0; i <= size && argc < MAX_ARGS + 1;) {
        argv[argc++] = text + i;
        i += strlen(text + i) + 1;
    }
    argv[argc] = NULL;
    if (setjmp(back) == 0) (void)pith_main(argc, argv);
    return 0;
}

/* Output, errors and time. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "port.h"

static int stdout_closed;

int port_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stdout, fmt, ap);
    va_end(ap);
    return n;
}

int port_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stderr, fmt, ap);
    va_end(ap);
    return n;
}

int port_out_bytes(const void *bytes, size_t n)
{
    if (stdout_closed) return -1;
    if (n && fwrite(bytes, 1, n, stdout) != n) stdout_closed = 1;
    if (fflush(stdout) != 0) stdout_closed = 1;
    return stdout_closed ? -1 : 0;
}

void port_out_flush(void)
{
    if (fflush(stdout) != 0) stdout_closed = 1;
}

_Noreturn void port_die(const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    fflush(stdout);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line, whatever the message quotes (arguments, names read from
     * files): control bytes become '?'. */
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    fprintf(stderr, "pith: %s\n", msg);
    exit(2);
}

_Noreturn void port_exit(int status)
{
    fflush(stdout);
    exit(status);
}

double port_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

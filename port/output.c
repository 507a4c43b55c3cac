/* Output, errors and time. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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
    port_progress_end();
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

/* ---- progress (port.h) ------------------------------------------------ */
static struct {
    int state; /* 0 unknown, 1 on (a terminal), -1 off */
    double delay, start, last;
    int shown;
} progress;

/* PITH_PROGRESS_DELAY's seconds, digits[.digits] (atof would link libc's
 * 6.7 KB float scanner; a delay needs no exact rounding) */
static double seconds_of(const char *s)
{
    double v = 0, scale = 1;
    for (int point = 0; (*s >= '0' && *s <= '9') || (*s == '.' && !point); s++) {
        if (*s == '.') point = 1;
        else if (point) v += (*s - '0') * (scale /= 10);
        else v = v * 10 + (*s - '0');
    }
    return v;
}

void port_progress(const char *what, uint64_t done, uint64_t total, int bytes)
{
    if (progress.state == 0) {
        const char *off = getenv("PITH_PROGRESS"), *delay = getenv("PITH_PROGRESS_DELAY");
        progress.state = isatty(2) && !(off && off[0] == '0') ? 1 : -1;
        progress.delay = delay ? seconds_of(delay) : 0.5;
    }
    if (progress.state < 0) return;
    double now = port_seconds();
    if (done == 0) {
        port_progress_end();
        progress.start = now;
        progress.last = -1;
        return;
    }
    if (now - progress.start < progress.delay || (now - progress.last < 0.25 && done < total)) return;
    progress.last = now;
    progress.shown = 1;
    double secs = now - progress.start > 1e-6 ? now - progress.start : 1e-6;
    if (bytes)
        fprintf(stderr, "\r%s: %.1f of %.1f MiB, %.1f MB/s  ", what, (double)done / 1048576.0, (double)total / 1048576.0,
                (double)done / secs / 1e6);
    else
        fprintf(stderr, "\r%s: %llu of %llu tokens, %.1f tokens/s  ", what, (unsigned long long)done,
                (unsigned long long)total, (double)done / secs);
}

void port_progress_end(void)
{
    if (progress.shown) fputc('\n', stderr);
    progress.shown = 0;
}

/* printf.c - the C library's printf family on src/base/format.c, in the
 * static musl builds only (PITH_OWN_PRINTF, toolchains/TARGET.mk): pith's
 * objects and libgomp.a's (its error and OMP_DISPLAY_ENV paths) call these,
 * so musl's vfprintf and the long-double arithmetic it brings are not
 * linked (format.h says why; docs/building.md, "Binary size", what it
 * saved). The host builds keep the C library's own. */
#ifdef PITH_OWN_PRINTF
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../src/base/format.h"

/* C returns an int: a longer text is an error. */
static int length_or_error(size_t n)
{
    if (n <= INT_MAX) return (int)n;
    errno = EOVERFLOW;
    return -1;
}

int vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap)
{
    return length_or_error(format_buffer(buf, cap, fmt, ap));
}

int snprintf(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

/* sprintf: a buffer without a size (as musl's, INT_MAX). */
int vsprintf(char *buf, const char *fmt, va_list ap)
{
    return vsnprintf(buf, INT_MAX, fmt, ap);
}

int sprintf(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsprintf(buf, fmt, ap);
    va_end(ap);
    return n;
}

/* To a FILE: through a small buffer, so that an unbuffered stderr gets a
 * write per 256 bytes, not one per piece. Each fwrite locks the FILE, so
 * a longer text from two threads at once could interleave (musl's locks
 * the whole call); pith prints from one thread at a time. */
typedef struct {
    FormatSink sink;
    FILE *file;
    int failed;
    size_t n;
    char buf[256];
} FileSink;

static void file_flush(FileSink *f)
{
    if (f->n && fwrite(f->buf, 1, f->n, f->file) != f->n) f->failed = 1;
    f->n = 0;
}

static void file_put(FormatSink *sink, const char *bytes, size_t n)
{
    FileSink *f = (FileSink *)sink;
    if (n > sizeof f->buf - f->n) file_flush(f);
    if (n > sizeof f->buf) {
        if (fwrite(bytes, 1, n, f->file) != n) f->failed = 1;
        return;
    }
    memcpy(f->buf + f->n, bytes, n);
    f->n += n;
}

int vfprintf(FILE *file, const char *fmt, va_list ap)
{
    FileSink f = {{file_put}, file, 0, 0, {0}};
    size_t n = format_v(&f.sink, fmt, ap);
    file_flush(&f);
    return f.failed ? -1 : length_or_error(n);
}

int fprintf(FILE *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(file, fmt, ap);
    va_end(ap);
    return n;
}

int vprintf(const char *fmt, va_list ap)
{
    return vfprintf(stdout, fmt, ap);
}

int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stdout, fmt, ap);
    va_end(ap);
    return n;
}
#endif

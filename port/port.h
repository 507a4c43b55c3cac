/* port.h - the only door from the core (src/) to the operating system.
 *
 * The core never calls malloc, open, read, mmap, printf or thread functions
 * itself; it calls these. Everything here is implemented in port/ and may use
 * libc, POSIX and OpenMP freely. */
#ifndef PITH_PORT_H
#define PITH_PORT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Output ----------------------------------------------------------- */
/* Formatted output to stdout / stderr. Return what vfprintf returns. */
int port_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int port_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Raw bytes to stdout (streamed text); flushes. Returns 0, or -1 when
 * stdout is closed (e.g. `| head`), after which callers should stop. */
int port_out_bytes(const void *bytes, size_t n);
void port_out_flush(void);
/* Prints "pith: <message>\n" to stderr and exits with status 2: the one
 * way bad input (files, arguments) ends the program. */
_Noreturn void port_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Flushes stdout and ends the program with `status` (e.g. after --plan). */
_Noreturn void port_exit(int status);

/* ---- Input ------------------------------------------------------------ */
/* Reads one line from stdin into buf (without the newline, NUL-terminated).
 * Returns 1 for a line, 0 at end of input, -1 if the line did not fit in
 * cap-1 bytes (the rest of it is read and dropped). */
int port_read_line(char *buf, size_t cap, size_t *len);
int port_stdin_is_tty(void);

/* ---- Time ------------------------------------------------------------- */
double port_seconds(void); /* monotonic clock, seconds */

/* ---- Memory: the one arena -------------------------------------------- */
/* Allocates the arena (anonymous mmap, zero-filled). Called once per run.
 * Returns NULL if the system refuses. */
void *port_arena_map(size_t bytes);
void port_arena_unmap(void *base, size_t bytes);
size_t port_page_size(void);          /* from sysconf, never assumed */
uint64_t port_physical_memory(void);  /* bytes of RAM, 0 if unknown */

/* ---- Threads ---------------------------------------------------------- */
int port_cpu_count(void);             /* online cores, >= 1 */
void port_set_threads(int n);         /* threads used by port_parallel */
int port_threads(void);
/* Runs fn(ctx, ith, nth) for ith = 0..nth-1 on the worker threads and
 * returns when all are done. nth = port_threads() (1 without OpenMP). */
void port_parallel(void (*fn)(void *ctx, int ith, int nth), void *ctx);

/* ---- Files ------------------------------------------------------------ */
/* A model file opened read-only. Two backends behind one interface:
 *  - mmap: `map` points at the whole file; bytes are reached zero-copy.
 *  - read: `map` is NULL; bytes are copied into caller buffers with
 *    chunked pread() (no mmap, 32-bit address spaces, --no-mmap). */
typedef struct PortFile {
    const char *path;      /* as given by the caller; not copied */
    uint64_t size;         /* bytes */
    const uint8_t *map;    /* whole-file mapping, or NULL (read backend) */
    int fd;
} PortFile;

/* Opens `path`. use_mmap=0 forces the read backend; use_mmap=1 tries mmap
 * and falls back to read if mapping fails (e.g. address space too small).
 * On failure returns -1 and writes a one-line reason (no "pith:" prefix,
 * no newline) into err. */
int port_file_open(PortFile *f, const char *path, int use_mmap, char *err, size_t err_len);
void port_file_close(PortFile *f);
/* Copies len bytes at offset off into dst. Returns 0, or -1 if the range
 * is outside the file or the read fails or comes up short. */
int port_file_read(PortFile *f, uint64_t off, void *dst, size_t len);
/* Pointer to bytes [off, off+len) when mapped and in range, else NULL. */
const uint8_t *port_file_span(const PortFile *f, uint64_t off, uint64_t len);
/* The bytes [off, off+len): a pointer into the mapping when mapped, else
 * read into buf (which must hold len bytes). NULL on error. */
const uint8_t *port_file_bytes(PortFile *f, uint64_t off, size_t len, void *buf);

/* ---- Output files ----------------------------------------------------- */
/* Writes n bytes to `path`: creates or truncates it when append is 0, adds
 * to its end when append is 1. Returns 0, or -1 with a one-line reason
 * (no "pith:" prefix, no newline) in err. (port/out_file.c) */
int port_write_file(const char *path, const void *data, size_t n, int append, char *err, size_t err_len);

#endif

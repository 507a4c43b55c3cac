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
int port_is_tty(int fd); /* 0 stdin, 1 stdout, 2 stderr */

/* ---- Time ------------------------------------------------------------- */
double port_seconds(void); /* monotonic clock, seconds */
/* Progress of a long operation on stderr, one line rewritten in place, only
 * when stderr is a terminal, at most four times a second and only once
 * `what` has run for PITH_PROGRESS_DELAY seconds (default 0.5; a quick one
 * prints nothing). done == 0 starts `what`; bytes != 0: done and total are
 * bytes, shown in MiB with MB/s, else tokens. port_progress_end() ends the
 * line if one was shown. PITH_PROGRESS=0 turns it off. */
void port_progress(const char *what, uint64_t done, uint64_t total, int bytes);
void port_progress_end(void);

/* ---- Memory: the one arena -------------------------------------------- */
/* Allocates the arena (anonymous mmap, zero-filled). Called once per run.
 * Returns NULL if the system refuses. */
void *port_arena_map(size_t bytes);
void port_arena_unmap(void *base, size_t bytes);
/* Asks for transparent huge pages on [p, p + bytes) of the arena, rounded
 * inward to the huge page size: memory read again for every token (the
 * weights --load read copies in), called before it is first touched. Fewer
 * TLB misses there; elsewhere (KV caches, activations) huge pages cost more
 * than they give. A hint: nothing happens where the kernel has none. */
void port_arena_huge(void *p, size_t bytes);
size_t port_page_size(void);          /* from sysconf, never assumed */
uint64_t port_physical_memory(void);  /* bytes of RAM, 0 if unknown */
/* Peak resident set of this process so far (VmHWM of /proc/self/status),
 * in bytes; 0 where there is no /proc. */
uint64_t port_peak_rss(void);
/* Bytes resident beyond the arena and the mapped model file: the binary,
 * libc, thread stacks and stdio buffers (and a sanitizer's runtime in
 * sanitizer builds). Measured, see port/memory.c. */
uint64_t port_memory_overhead(void);

/* ---- Threads ---------------------------------------------------------- */
int port_cpu_count(void);             /* online cores, >= 1 */
void port_set_threads(int n);         /* threads used by port_parallel */
int port_threads(void);
/* Runs fn(ctx, ith, nth) for ith = 0..nth-1 on the worker threads and
 * returns when all are done. nth = port_threads() (1 without OpenMP). */
void port_parallel(void (*fn)(void *ctx, int ith, int nth), void *ctx);
/* Inside fn of port_parallel: waits until every thread of the region got
 * here (and sees what the others wrote before). Nothing outside a region. */
void port_barrier(void);

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
/* Whether path names something (a file not yet written is no error). */
int port_file_exists(const char *path);
/* The regular files of folder dir whose names start with prefix and end
 * with suffix: visit(ctx, name, bytes, mtime seconds) for each. 0, or -1
 * if dir cannot be read. */
int port_dir_files(const char *dir, const char *prefix, const char *suffix,
                   void (*visit)(void *ctx, const char *name, uint64_t bytes, int64_t mtime), void *ctx);
/* Removes a file: 0, or -1. */
int port_remove(const char *path);
void port_file_close(PortFile *f);
/* Maps an open file read backend -> mmap (after planning, on the same
 * descriptor: the file is never opened twice). 0, or -1 when the system
 * refuses (it stays on reads); port_file_unmap undoes it. */
int port_file_map(PortFile *f);
void port_file_unmap(PortFile *f);
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
/* A file written whole or not at all: the bytes go to PATH.tmp.PID, which
 * commit renames to PATH (a reader never sees half a file); a failed
 * write is remembered and reported by commit, which then removes the
 * temporary file. Each returns 0 or -1 (err: one line). */
typedef struct {
    int fd, failed;       /* failed: the first errno */
    const char *path;
    char tmp[4096 + 32];
} PortAtomicFile;
int port_atomic_open(PortAtomicFile *f, const char *path, char *err, size_t err_len);
int port_atomic_write(PortAtomicFile *f, const void *data, size_t n);
int port_atomic_commit(PortAtomicFile *f, char *err, size_t err_len);

/* ---- The machine: target, board profile, CPU features (port/cpu.c) ---- */
/* Board defaults, compiled in by `make BOARD=NAME` (boards/NAME.mk); these
 * are the values of a build without a board profile. 0 threads = every
 * online core; 0 bytes of memory = a share of the physical RAM. */
#ifndef PITH_BOARD_NAME
#define PITH_BOARD_NAME "generic"
#endif
#ifndef PITH_DEFAULT_THREADS
#define PITH_DEFAULT_THREADS 0
#endif
#ifndef PITH_DEFAULT_MEM
#define PITH_DEFAULT_MEM 0
#endif
#ifndef PITH_DEFAULT_CTX
#define PITH_DEFAULT_CTX 4096
#endif

/* What the CPU running us can do (1 = yes), found once at run time: x86
 * with cpuid (AVX-family only when the OS saves the YMM state), ARM with
 * getauxval(AT_HWCAP/AT_HWCAP2). Kernels pick their code path from it. */
typedef struct PortCpu {
    int avx2, fma, f16c;      /* x86-64 */
    int avx512vnni;           /* x86-64: AVX-512 F+BW+VL+VNNI, ZMM state saved by the OS */
    int neon;                 /* ARM Advanced SIMD (always on aarch64) */
    int dotprod, fp16, i8mm;  /* ARMv8.2+: SDOT/UDOT, half-precision arithmetic, SMMLA */
    int vfp, vfpv4;           /* 32-bit ARM floating point (VFPv4 = fused multiply-add) */
} PortCpu;
const PortCpu *port_cpu(void);
/* The target triple of this build ("aarch64-linux-musl"), or the machine
 * name and "native" for a build with the host compiler. */
const char *port_target(void);
/* Instruction-set features the compiler was allowed to use everywhere in
 * this build, space-separated (e.g. "neon vfpv4"). */
const char *port_features_compiled(void);
/* Prints the `pith --version` report: version, target, board and its
 * defaults, features compiled in and found at run time. */
void port_print_version(const char *version);

/* ---- Signals (port/signals.c) ----------------------------------------- */
/* Ctrl-C for interactive commands: after port_interrupt_catch(), a SIGINT
 * while busy (port_interrupt_busy(1), e.g. generating a reply) only sets a
 * flag the core polls with port_interrupted(); a SIGINT while idle, or a
 * second one before the flag was cleared, ends the program (status 130). */
void port_interrupt_catch(void);
void port_interrupt_busy(int on);
int port_interrupted(void);
void port_clear_interrupt(void);
/* When the model file at path is memory-mapped: a SIGBUS (the file was
 * truncated under the mapping) prints "pith: PATH: the model file changed or
 * was truncated while in use" and exits with status 2. */
void port_guard_mapped_file(const char *path);

/* ---- Network (port/net.c), for `pith serve` ----------------------------
 * TCP only, every socket non-blocking, numeric addresses only (no resolver,
 * nothing allocated). */
#define PORT_NET_READ 1
#define PORT_NET_WRITE 2
#define PORT_NET_HUP 4            /* error or hang-up (poll's POLLERR/POLLHUP) */
#define PORT_NET_MAX_POLL 1024    /* sockets one port_net_poll call watches */
typedef struct {
    int fd;
    int want;                     /* PORT_NET_READ | PORT_NET_WRITE */
    int got;                      /* filled by port_net_poll */
} PortPoll;
/* Listens on host (a numeric IPv4/IPv6 address, or "localhost") and port
 * (0 = a free port, stored in *bound_port). Returns the socket, or -1 with
 * a one-line reason in err. */
int port_net_listen(const char *host, int port, int backlog, int *bound_port, char *err, size_t err_len);
/* One waiting connection (non-blocking, Nagle off), or -1 if none. */
int port_net_accept(int listen_fd);
/* recv/send without blocking: bytes moved (recv: 0 = the peer closed),
 * -1 = try again later, -2 = error (the connection is gone). */
long port_net_recv(int fd, void *buf, size_t cap);
long port_net_send(int fd, const void *buf, size_t n);
void port_net_shutdown_write(int fd);   /* sends FIN, reading stays open */
void port_net_close(int fd);
/* Waits up to timeout_ms (0: no wait, -1: forever) for p[i].want; sets
 * p[i].got. Returns how many are ready, 0 (timeout or signal), -1 error. */
int port_net_poll(PortPoll *p, int n, int timeout_ms);
/* Seconds since 1970 (the "created" field of API responses). */
int64_t port_wall_seconds(void);
/* The time a chat template's strftime_now formats: SOURCE_DATE_EPOCH when
 * it is set to a number (the reproducible-builds convention: tests fix the
 * date with it), else port_wall_seconds(). */
int64_t port_template_seconds(void);

/* ---- Streamed weights (port/stream.c), for --load stream --------------
 * One reader thread copies lists of file ranges into caller buffers (the
 * "slots", carved from the arena) with chunked pread while the caller
 * computes on another slot. It asks the kernel to read the chunk it copies
 * and the next (posix_fadvise WILLNEED); after each chunk it drops the
 * copied pages from the page cache (DONTNEED), so a model larger than the
 * memory streams without filling a memory cgroup with cache. One reader
 * per process: one streamed model at a time (start, fetch..., stop). */
#define PORT_STREAM_SLOTS 2
#define PORT_STREAM_MAX_PIECES 16
typedef struct {
    PortFile *file;      /* opened by port_file_open (mapped or not) */
    uint64_t off, len;   /* the bytes [off, off+len) of the file */
    void *dst;           /* receives len bytes */
} PortStreamPiece;
/* Starts the reader thread (once; later calls do nothing). keep_cache = 1
 * skips the DONTNEED (the page cache may then keep the file between
 * tokens: much faster when the machine has room for it, but it fills a
 * memory cgroup). Returns 0, or -1 with a one-line reason (no "pith:"
 * prefix) in err. */
int port_stream_start(int keep_cache, char *err, size_t err_len);
/* Queues the fetch of pieces[0..n-1] (n <= PORT_STREAM_MAX_PIECES; the list
 * is copied) into slot `slot`, which must have no fetch in flight. Fetches
 * run one at a time, in the order queued. */
void port_stream_fetch(int slot, const PortStreamPiece *pieces, int n);
/* Waits until the slot's fetch is complete (returns at once if none is
 * queued). A read error or a short read (the file shrank while in use)
 * ends the program with "pith: FILE: byte N: what", status 2. */
void port_stream_wait(int slot);
/* Drops queued fetches, stops one under way at its next chunk and ends
 * the thread: call before unmapping the memory the slots live in. */
void port_stream_stop(void);

#endif

/* Streamed weights (--load stream): one reader thread copies lists of file
 * ranges into slots of the arena while the compute threads work on another
 * slot. The core says what to fetch and when it needs it (port.h); only
 * this file knows about threads, pread and posix_fadvise.
 *
 * Reads go in chunks: the chunk being copied and the one after it are
 * announced to the kernel (POSIX_FADV_WILLNEED starts their disk reads
 * ahead of the copy),
 * and after each chunk is copied its pages are dropped from the page cache
 * (POSIX_FADV_DONTNEED), so streaming a model larger than memory does not
 * fill a memory cgroup with cache that will not be used before the next
 * token. Announcing a whole fetch (a layer) at once put that much cache,
 * locked while the disk fills it, beside the arena: more than a tight
 * cgroup holds, whose kernel then killed the process instead of waiting. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "port.h"

/* Bytes per pread: big enough for the disk, small enough that the page
 * cache behind the copy is dropped often. */
#define STREAM_CHUNK ((uint64_t)1 << 22)
/* How far past the chunk being copied the kernel is asked to read. */
#define STREAM_AHEAD STREAM_CHUNK

enum { SLOT_IDLE, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE, SLOT_FAILED };

typedef struct {
    int state;
    uint64_t seq;                    /* fetches run in the order queued */
    int n;
    PortStreamPiece pieces[PORT_STREAM_MAX_PIECES];
    char err[512];                   /* "FILE: byte N: what" when FAILED */
} Slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;  /* the reader waits here for a fetch */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;  /* the caller waits here for a slot */

static struct {
    pthread_t thread;
    int running;
    int quit;
    int keep_cache;                  /* no DONTNEED behind the copies */
    uint64_t next_seq;
    Slot slot[PORT_STREAM_SLOTS];
} S;

static void advise(const PortFile *f, uint64_t off, uint64_t len, int advice)
{
    if (len > 0 && off <= (uint64_t)INT64_MAX && len <= (uint64_t)INT64_MAX)
        (void)posix_fadvise(f->fd, (off_t)off, (off_t)len, advice); /* a hint: failure changes nothing */
}

/* The read-ahead of one fetch: how far into its pieces the kernel has
 * been told (WILLNEED) and how much has been copied. */
typedef struct {
    const PortStreamPiece *pieces;
    int n, piece;                    /* announced up to pieces[piece] + off */
    uint64_t off, announced, copied;
} ReadAhead;

/* Announces the fetch's bytes up to the end of the chunk being copied and
 * STREAM_AHEAD more. */
static void read_ahead(ReadAhead *ra)
{
    uint64_t until = ra->copied + STREAM_CHUNK + STREAM_AHEAD;
    while (ra->piece < ra->n && ra->announced < until) {
        const PortStreamPiece *p = &ra->pieces[ra->piece];
        uint64_t want = until - ra->announced, left = p->len - ra->off;
        uint64_t len = want < left ? want : left;
        advise(p->file, p->off + ra->off, len, POSIX_FADV_WILLNEED);
        ra->announced += len;
        ra->off += len;
        if (ra->off == p->len) ra->piece++, ra->off = 0;
    }
}

/* Copies one piece; returns 0, -1 with the reason in err, or 1 when
 * port_stream_stop asked the reader to give up. */
static int read_piece(const PortStreamPiece *p, ReadAhead *ra, char *err, size_t err_len)
{
    uint8_t *dst = p->dst;
    uint64_t off = p->off, left = p->len;
    while (left > 0) {
        if (__atomic_load_n(&S.quit, __ATOMIC_RELAXED)) return 1;
        uint64_t want = left < STREAM_CHUNK ? left : STREAM_CHUNK;
        uint64_t start = off;
        while (want > 0) {
            ssize_t got = pread(p->file->fd, dst, (size_t)want, (off_t)off);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) {
                snprintf(err, err_len, "%s: byte %llu: cannot read the weights: %s", p->file->path,
                         (unsigned long long)off, strerror(errno));
                return -1;
            }
            if (got == 0) {
                snprintf(err, err_len, "%s: byte %llu: the file ends there: it was truncated while in use",
                         p->file->path, (unsigned long long)off);
                return -1;
            }
            dst += got;
            off += (uint64_t)got;
            want -= (uint64_t)got;
            left -= (uint64_t)got;
        }
        if (!S.keep_cache) advise(p->file, start, off - start, POSIX_FADV_DONTNEED);
        ra->copied += off - start;
        read_ahead(ra);
    }
    return 0;
}

static void *reader(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        int s = -1;
        for (int i = 0; i < PORT_STREAM_SLOTS; i++)
            if (S.slot[i].state == SLOT_QUEUED && (s < 0 || S.slot[i].seq < S.slot[s].seq)) s = i;
        if (s < 0) {
            if (S.quit) break;
            pthread_cond_wait(&work, &lock);
            continue;
        }
        Slot *sl = &S.slot[s];
        sl->state = SLOT_BUSY;
        pthread_mutex_unlock(&lock);

        /* The caller does not touch a busy slot: no lock needed for its fields. */
        ReadAhead ra = {.pieces = sl->pieces, .n = sl->n};
        read_ahead(&ra);
        int rc = 0;
        for (int i = 0; i < sl->n && rc == 0; i++) rc = read_piece(&sl->pieces[i], &ra, sl->err, sizeof sl->err);

        pthread_mutex_lock(&lock);
        sl->state = rc == 0 ? SLOT_DONE : rc < 0 ? SLOT_FAILED : SLOT_IDLE;
        pthread_cond_broadcast(&done);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int port_stream_start(int keep_cache, char *err, size_t err_len)
{
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (!S.running) {
        S.quit = 0;
        S.keep_cache = keep_cache;
        for (int i = 0; i < PORT_STREAM_SLOTS; i++) S.slot[i].state = SLOT_IDLE;
        int e = pthread_create(&S.thread, NULL, reader, NULL);
        if (e != 0) {
            snprintf(err, err_len, "cannot start the thread that reads the weights: %s", strerror(e));
            rc = -1;
        } else {
            S.running = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void port_stream_fetch(int slot, const PortStreamPiece *pieces, int n)
{
    if (slot < 0 || slot >= PORT_STREAM_SLOTS || n < 0 || n > PORT_STREAM_MAX_PIECES)
        port_die("internal error: stream fetch of %d pieces into slot %d", n, slot);
    pthread_mutex_lock(&lock);
    Slot *sl = &S.slot[slot];
    if (!S.running || sl->state == SLOT_QUEUED || sl->state == SLOT_BUSY) {
        pthread_mutex_unlock(&lock);
        port_die("internal error: stream slot %d is %s", slot, S.running ? "still being filled" : "not started");
    }
    sl->n = n;
    memcpy(sl->pieces, pieces, (size_t)n * sizeof *pieces);
    sl->err[0] = '\0';
    sl->seq = S.next_seq++;
    sl->state = SLOT_QUEUED;
    pthread_cond_signal(&work);
    pthread_mutex_unlock(&lock);
}

void port_stream_wait(int slot)
{
    if (slot < 0 || slot >= PORT_STREAM_SLOTS) port_die("internal error: stream slot %d", slot);
    pthread_mutex_lock(&lock);
    Slot *sl = &S.slot[slot];
    while (sl->state == SLOT_QUEUED || sl->state == SLOT_BUSY) pthread_cond_wait(&done, &lock);
    if (sl->state == SLOT_FAILED) {
        char msg[sizeof sl->err];
        memcpy(msg, sl->err, sizeof msg);
        sl->state = SLOT_IDLE;
        pthread_mutex_unlock(&lock);
        port_die("%s", msg);
    }
    sl->state = SLOT_IDLE;
    pthread_mutex_unlock(&lock);
}

void port_stream_stop(void)
{
    pthread_mutex_lock(&lock);
    if (!S.running) {
        pthread_mutex_unlock(&lock);
        return;
    }
    /* Fetches nobody will use are dropped, one under way stops at its next
     * chunk; the join makes sure nothing writes into the slots afterwards
     * (the arena they live in is about to be unmapped). */
    for (int i = 0; i < PORT_STREAM_SLOTS; i++)
        if (S.slot[i].state == SLOT_QUEUED) S.slot[i].state = SLOT_IDLE;
    __atomic_store_n(&S.quit, 1, __ATOMIC_RELAXED);
    pthread_cond_signal(&work);
    pthread_mutex_unlock(&lock);
    pthread_join(S.thread, NULL);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < PORT_STREAM_SLOTS; i++) S.slot[i].state = SLOT_IDLE;
    S.running = 0;
    pthread_mutex_unlock(&lock);
}

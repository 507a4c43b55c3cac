/* status.h - what a failed call of the core says besides its one line of
 * text: one code for every module, so a caller decides by the code (the
 * server's HTTP status, a command's exit) and never by reading the
 * message. 0 is success; every failure has a kind. */
#ifndef PITH_STATUS_H
#define PITH_STATUS_H

typedef enum {
    PITH_OK = 0,
    PITH_BAD_INPUT,   /* a file, argument, request, template or grammar that is malformed or out of range */
    PITH_UNSUPPORTED, /* well-formed, but something pith does not do (an architecture, a type, a key) */
    PITH_NO_MEMORY,   /* does not fit: the memory budget, the context, a planned buffer */
    PITH_IO,          /* a file could not be opened, read or written */
    PITH_INTERNAL,    /* a bug: a plan too small, a state that cannot be */
    PITH_CANCELLED    /* the caller stopped it */
} PithStatus;

/* "bad input", "unsupported", ... (for logs). */
static inline const char *pith_status_name(PithStatus s)
{
    static const char *const names[] = {"ok", "bad input", "unsupported", "out of memory", "I/O error", "internal error",
                                        "cancelled"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

#endif

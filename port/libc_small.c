/* libc_small.c - smaller versions of a few C library functions, in the
 * static musl builds only (PITH_SMALL_LIBC, toolchains/TARGET.mk), where
 * every byte counts (docs/building.md, "Binary size"). Each does what the
 * C standard asks; what it gives up is said beside it. The host builds
 * keep the C library's own. */
#ifdef PITH_SMALL_LIBC
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

/* strerror: the texts of the errors pith and libgomp meet (files, memory,
 * sockets; musl's wording), "Error N" for the rest. musl's table of every
 * errno is 2,246 bytes on aarch64. Codes and texts are in the same
 * order, the texts one after another. */
static const unsigned char error_codes[] = {
    EPERM, ENOENT, EINTR, EIO, ENXIO, EBADF, EAGAIN, ENOMEM, EACCES, EBUSY, EEXIST, ENODEV, ENOTDIR,
    EISDIR, EINVAL, ENFILE, EMFILE, ETXTBSY, EFBIG, ENOSPC, ESPIPE, EROFS, EPIPE, ENAMETOOLONG,
    ENOSYS, ELOOP, EOVERFLOW, EAFNOSUPPORT, EADDRINUSE, EADDRNOTAVAIL, ECONNRESET, EDQUOT,
};
static const char error_texts[] =
    "Operation not permitted\0"
    "No such file or directory\0"
    "Interrupted system call\0"
    "I/O error\0"
    "No such device or address\0"
    "Bad file number\0"
    "Operation would block\0"
    "Out of memory\0"
    "Permission denied\0"
    "Device or resource busy\0"
    "File exists\0"
    "No such device\0"
    "Not a directory\0"
    "Is a directory\0"
    "Invalid argument\0"
    "File table overflow\0"
    "Too many open files\0"
    "Text file busy\0"
    "File too large\0"
    "No space left on device\0"
    "Illegal seek\0"
    "Read-only file system\0"
    "Broken pipe\0"
    "Filename too long\0"
    "Function not supported\0"
    "Too many levels of symbolic links\0"
    "Value too large for defined data type\0"
    "Address family not supported by protocol\0"
    "Address already in use\0"
    "Cannot assign requested address\0"
    "Connection reset by peer\0"
    "Quota exceeded\0";

char *strerror(int code)
{
    static _Thread_local char number[24];
    const char *text = error_texts;
    for (size_t i = 0; i < sizeof error_codes; i++, text += strlen(text) + 1)
        if (error_codes[i] == code) return (char *)text;
    /* "Error " and the number, without printf (which may call strerror). */
    char digits[12];
    unsigned u = code < 0 ? 0u - (unsigned)code : (unsigned)code;
    int n = 0;
    do digits[n++] = (char)('0' + u % 10); while (u /= 10);
    char *p = stpcpy(number, code < 0 ? "Error -" : "Error ");
    while (n) *p++ = digits[--n];
    *p = 0;
    return number;
}

/* strstr: the plain search, at most strlen(hay) * strlen(needle) steps.
 * pith's needles are short constants (a template's or a pre-tokenizer's
 * marker, a table cell's sign), looked for once per load or command:
 * musl's two-way search (linear in any case) is 1,296 bytes on aarch64. */
char *strstr(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncmp(hay, needle, n)) return (char *)hay;
    return n ? NULL : (char *)hay;
}

/* libgomp.a, built against glibc, reads its environment variables with
 * glibc's character classes: a table of class bits (__ctype_b_loc) and one
 * of lower-case letters (__ctype_tolower_loc), each indexed from -128 to
 * 255. musl keeps both as constants (2,344 bytes on aarch64); here they are
 * filled in memory that is not in the file, before any constructor of
 * default priority runs (libgomp's reads the environment). The class bits
 * in glibc's order, as a little-endian machine stores them. */
static int (*const glibc_classes[])(int) = {isupper, islower, isalpha, isdigit, isxdigit, isspace,
                                            isprint, isgraph, isblank, iscntrl, ispunct, isalnum};
static unsigned short class_bits[384];
static int32_t lower_case[384];

__attribute__((constructor(101))) static void fill_ctype_tables(void)
{
    for (int c = -128; c < 256; c++) {
        unsigned bits = 0;
        for (unsigned b = 0; b < sizeof glibc_classes / sizeof glibc_classes[0]; b++)
            if (c >= 0 && glibc_classes[b](c)) bits |= b < 8 ? 1u << (b + 8) : 1u << (b - 8);
        class_bits[c + 128] = (unsigned short)bits;
        lower_case[c + 128] = c >= 0 ? tolower(c) : c;
    }
}

const unsigned short **__ctype_b_loc(void);
const unsigned short **__ctype_b_loc(void)
{
    static const unsigned short *at = class_bits + 128;
    return &at;
}

const int32_t **__ctype_tolower_loc(void);
const int32_t **__ctype_tolower_loc(void)
{
    static const int32_t *at = lower_case + 128;
    return &at;
}
#endif

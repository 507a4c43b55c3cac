/* format.h - printf's formatting, with double and integer arithmetic only.
 *
 * The static musl builds define snprintf, fprintf and the rest of the
 * family on top of it (port/printf.c), in place of musl's vfprintf: that
 * one prints every float through long double, which on aarch64 is IEEE
 * quad precision done in software (libgcc's addtf3, multf3, ...), about
 * 20 KB of the binary for numbers pith only ever has as doubles. The host
 * builds keep the C library's printf (docs/building.md, "Binary size").
 *
 * What it formats: the flags - + space 0 #, a width and a precision (either
 * may be *), the lengths hh h l ll z j t, and the conversions d i u o x X c
 * s p f F e E g G %. Floats are printed as glibc and musl print them: the
 * exact decimal value of the double, rounded to the precision with ties to
 * even, inf and nan spelled in the conversion's case, the sign of -0 kept.
 * %p and a null %s are spelled as glibc spells them ("(nil)", "(null)").
 * Anything else (the L length, %a, %n, %lc, %m, ...) is copied to the
 * output as written, from % to the conversion letter, and takes no
 * argument, as glibc copies an unknown conversion: nothing reads an
 * argument of a type it does not know or writes through a pointer. */
#ifndef PITH_FORMAT_H
#define PITH_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

/* Where the text goes: put is called with consecutive pieces (n >= 1). A
 * sink is embedded as the first member of the writer's own structure. */
typedef struct FormatSink FormatSink;
struct FormatSink {
    void (*put)(FormatSink *sink, const char *bytes, size_t n);
};

/* Formats fmt with the arguments ap into sink; returns the number of bytes
 * put, which is what vsnprintf returns when it fits in an int. */
size_t format_v(FormatSink *sink, const char *fmt, va_list ap);

/* vsnprintf's contract: at most cap - 1 bytes into buf and a NUL after them
 * (nothing when cap is 0); returns the length the whole text has. */
size_t format_buffer(char *buf, size_t cap, const char *fmt, va_list ap);

#endif

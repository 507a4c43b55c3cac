# x86_64, fully static against musl (Debian: musl-tools).
# Baseline x86-64 (SSE2): AVX2/FMA/F16C are found at run time (port/cpu.c).
CROSS_CC       = x86_64-linux-musl-gcc
CROSS_STRIP    = strip
TARGET_CFLAGS  =
TARGET_LDFLAGS = $(MUSL_STATIC_LDFLAGS)
TARGET_DEFS    = -DPITH_MUSL_GOMP -DPITH_OWN_PRINTF -DPITH_SMALL_LIBC
QEMU           = qemu-x86_64-static

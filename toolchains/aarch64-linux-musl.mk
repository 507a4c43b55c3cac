# 64-bit ARM, fully static against musl (Debian: musl-dev:arm64, which pulls
# gcc-aarch64-linux-gnu; the wrapper adds musl's specs). Every 64-bit Pi
# (3, 4, 5, Zero 2 W on a 64-bit OS) and any ARMv8-A Linux.
# Baseline ARMv8.0-A with NEON (Cortex-A53, the oldest 64-bit Pi core):
# dotprod, fp16 arithmetic and i8mm are found at run time (port/cpu.c).
# GCC's outline atomics (__aarch64_* in libgcc) pick LSE at run time too.
# Segments are aligned for 64 KiB pages (ld's default here), so the binary
# loads on 4 KiB, 16 KiB (Pi 5) and 64 KiB page kernels.
CROSS_CC       = aarch64-linux-musl-gcc
CROSS_STRIP    = aarch64-linux-gnu-strip
TARGET_CFLAGS  = -march=armv8-a
TARGET_LDFLAGS = $(MUSL_STATIC_LDFLAGS) -Wl,-z,max-page-size=65536
TARGET_DEFS    = -DPITH_MUSL_GOMP -DPITH_OWN_PRINTF -DPITH_SMALL_LIBC
QEMU           = qemu-aarch64-static

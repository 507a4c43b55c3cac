# 32-bit ARMv7-A, hard-float, fully static against musl (Debian:
# musl-dev:armhf, which pulls gcc-arm-linux-gnueabihf). Pi 2, 3, 4, 5 and
# Zero 2 W on a 32-bit OS. Every one of them has NEON with VFPv4 (Cortex-A7
# and later), so NEON and fused multiply-add are the baseline here; the
# fp16 format is IEEE (for __fp16 storage and conversions).
# Segments are aligned for 64 KiB pages so the binary also loads under an
# arm64 kernel with 16 KiB pages (Pi 5) that runs 32-bit programs.
CROSS_CC       = arm-linux-musleabihf-gcc
CROSS_STRIP    = arm-linux-gnueabihf-strip
TARGET_CFLAGS  = -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee
TARGET_LDFLAGS = $(MUSL_STATIC_LDFLAGS) -Wl,-z,max-page-size=65536
TARGET_DEFS    = -DPITH_MUSL_GOMP -DPITH_OWN_PRINTF -DPITH_SMALL_LIBC
QEMU           = qemu-arm-static

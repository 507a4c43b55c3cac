# 32-bit ARMv6 (ARM1176JZF-S: Pi 1, Pi Zero, Zero W), fully static against
# musl (Debian: musl-dev:armel, which pulls gcc-arm-linux-gnueabi).
#
# ABI: Debian armel (musl's libc.a, libgcc.a, libgomp.a) is built for
# ARMv5TE with the soft-float ABI. -mfloat-abi=softfp uses the VFP unit
# inside functions but passes floats in integer registers, exactly like
# soft, so our objects link with those libraries (a hard-float object
# would not). The binary does not depend on the board's userland: it runs
# under Raspberry Pi OS (armhf) as well, being static.
#
# Atomics: libgomp.a (ARMv5TE) uses __sync_* from libgcc.a, which go
# through the kernel's user helpers: nothing else is needed. Do NOT add
# -latomic: Debian's libatomic.a selects its sized entry points
# (__atomic_load_8, ...) with IFUNCs, which musl's static start-up never
# resolves: calls would land in the resolver and return garbage. The link
# rule refuses any binary with IRELATIVE relocations for that reason.
# -marm: the ARM1176 has Thumb-1 only; ARM state is also faster on it.
CROSS_CC       = arm-linux-musleabi-gcc
CROSS_STRIP    = arm-linux-gnueabi-strip
TARGET_CFLAGS  = -march=armv6kz+fp -mfpu=vfp -mfloat-abi=softfp -marm -mtune=arm1176jzf-s
TARGET_LDFLAGS = $(MUSL_STATIC_LDFLAGS) -Wl,-z,max-page-size=65536
TARGET_DEFS    = -DPITH_MUSL_GOMP -DPITH_OWN_PRINTF -DPITH_SMALL_LIBC
QEMU           = qemu-arm-static

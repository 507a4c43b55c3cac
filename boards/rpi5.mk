# Raspberry Pi 5 / 500 / CM5: four Cortex-A76 cores (ARMv8.2: NEON, dotprod,
# fp16; no i8mm), 2 to 16 GB: the memory budget is a share of the RAM found
# at run time. Its kernel uses 16 KiB pages: the aarch64 target aligns
# segments for 64 KiB and asks sysconf for the page size, so the generic
# aarch64 binary runs as is. dotprod/fp16 kernels are chosen at run time:
# -mtune only, so this build still runs on every 64-bit Pi.
BOARD_TARGET   = aarch64-linux-musl
BOARD_CFLAGS   = -mtune=cortex-a76
BOARD_THREADS  = 4
BOARD_MEM_MIB  = 0
BOARD_CTX      = 8192

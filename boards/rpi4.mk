# Raspberry Pi 4 B / 400 / CM4: four Cortex-A72 cores (ARMv8.0: NEON, no
# dotprod), 1 to 8 GB: the memory budget is a share of the RAM found at run
# time. 64-bit OS; with a 32-bit OS use TARGET=armv7-linux-musleabihf.
BOARD_TARGET   = aarch64-linux-musl
BOARD_CFLAGS   = -mtune=cortex-a72
BOARD_THREADS  = 4
BOARD_MEM_MIB  = 0
BOARD_CTX      = 4096

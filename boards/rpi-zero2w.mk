# Raspberry Pi Zero 2 W: four Cortex-A53 cores (ARMv8.0: NEON, no dotprod),
# 512 MB. 64-bit OS; with a 32-bit OS use TARGET=armv7-linux-musleabihf.
BOARD_TARGET   = aarch64-linux-musl
BOARD_CFLAGS   = -mtune=cortex-a53
BOARD_THREADS  = 4
BOARD_MEM_MIB  = 320
BOARD_CTX      = 2048

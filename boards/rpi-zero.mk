# Raspberry Pi Zero / Zero W / Pi 1: one ARM1176JZF-S core (ARMv6, VFPv2, no
# NEON), 512 MB shared with the GPU (about 430 MB left to Linux).
BOARD_TARGET   = armv6-linux-musleabi
BOARD_CFLAGS   = -mtune=arm1176jzf-s
BOARD_THREADS  = 1
BOARD_MEM_MIB  = 320
BOARD_CTX      = 1024

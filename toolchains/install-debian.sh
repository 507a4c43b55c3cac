#!/bin/sh
# Installs exactly the Debian 12 packages pith's builds and tests need.
# Safe to run again; needs root (or sudo). About a minute on a fresh machine.
#
#   build-essential, file, unicode-data   native build, tests, Unicode tables
#   musl-tools                             x86_64-linux-musl-gcc (static x86-64)
#   musl-dev:arm64 / :armhf / :armel       musl for each ARM target, with the
#       aarch64-linux-musl-gcc, arm-linux-musleabihf-gcc and
#       arm-linux-musleabi-gcc wrappers; each depends on the matching
#       gcc-*-linux-gnu cross compiler (binutils, libgcc, libgomp.a)
#   qemu-user-static                       runs the ARM binaries in tests/cross.sh
#   clang, libclang-rt-14-dev              libFuzzer harnesses (tests/ci/t_fuzz.sh)
#   curl (and node + npm, from Debian only when the machine has none)
#                                          the `pith serve` tests (curl, the openai npm package)
#   python3-jinja2                         tests/t_template_corpus.sh: jinja2 (as
#                                          transformers sets it up) renders the
#                                          reference texts of the Jinja interpreter
#   systemd, man-db                        tests/t_install.sh: systemd-analyze verify of
#                                          boards/pith.service (it runs man for its man: link)
#                                          and the installed man page
# --no-install-recommends keeps out glibc cross headers and linux-musl-dev,
# which nothing here uses.
set -u
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
packages="build-essential musl-tools file unicode-data curl python3-jinja2 systemd man-db clang libclang-rt-14-dev qemu-user-static musl-dev:arm64 musl-dev:armhf musl-dev:armel"
missing=
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -z "$missing" ]; then
    echo "install-debian: all packages present"
    exit 0
fi
# The musl-dev:ARCH packages live in the foreign architectures' indexes.
for arch in arm64 armhf armel; do
    dpkg --print-foreign-architectures | grep -qx "$arch" || $SUDO dpkg --add-architecture "$arch"
done
# apt-get update can exit 100 while one index (often armhf) is mid-sync: try
# once more, then go on regardless; the install below fails loudly if a
# package really cannot be had.
if ! $SUDO apt-get update -q; then
    sleep 5
    $SUDO apt-get update -q || echo "install-debian: apt-get update failed (continuing)"
fi
$SUDO apt-get install -y -q --no-install-recommends $missing

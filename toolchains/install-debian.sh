#!/bin/sh
# Installs exactly the Debian 12 packages pith's builds and tests need.
# Safe to run again; needs root (or sudo). Cross toolchains for the ARM
# targets come from musl-dev of each architecture (with gcc cross wrappers).
set -u
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
packages="build-essential musl-tools file unicode-data"
missing=
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "install-debian: all packages present"
    exit 0
fi
# apt-get update can exit 100 while one index is mid-sync: go on regardless,
# the install below fails loudly if a package really cannot be had.
$SUDO apt-get update -q || echo "install-debian: apt-get update failed (continuing)"
$SUDO apt-get install -y -q --no-install-recommends $missing

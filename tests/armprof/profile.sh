#!/bin/sh
# profile.sh - instructions per token by function of an ARM build of pith
# under qemu-user, with fnprof.c (a TCG plugin built here against armcount's
# plugin header, loaded into the qemu that armcount's setup.sh unpacked).
# As armcount's pertoken.sh: `pith bench` with -r 1 and -r 2, -t 1, the
# difference divided by the tokens (pp: -p 64 -n 0, tg: -p 0 -n 16).
#
#   sh tests/armprof/profile.sh aarch64 cortex-a53 tg build/aarch64-linux-musl/pith MODEL [TOP]
#   sh tests/armprof/profile.sh arm cortex-a7 pp build/armv7-linux-musleabihf/pith MODEL
# prints the TOP (default 30) functions: millions of instructions per token
# and share. The binary must be the unstripped build (symbols); static
# functions inlined into others count as the function they are in.
set -eu
cd "$(dirname "$0")/../.."
D=${ARMCOUNT_DIR:-$HOME/.cache/armcount}
arch=$1 cpu=$2 mode=$3 bin=$4 model=$5 top=${6:-30}
Q="$D/qemu/usr/bin/qemu-$arch"
[ -x "$Q" ] && [ -f "$D/include/qemu-plugin.h" ] || { echo "profile: run ../shared/tools/armcount/setup.sh first (root)" >&2; exit 2; }
P=build/armprof/libfnprof.so
if [ ! -f "$P" ] || [ tests/armprof/fnprof.c -nt "$P" ]; then
    mkdir -p build/armprof
    gcc -O2 -shared -fPIC -Wall -I"$D/include" $(pkg-config --cflags glib-2.0) -o "$P" tests/armprof/fnprof.c \
        $(pkg-config --libs glib-2.0)
fi
case $arch in aarch64) NM=aarch64-linux-gnu-nm ;; *) NM=arm-linux-gnueabihf-nm ;; esac
case $mode in pp) set -- -p 64 -n 0; n=64 ;; tg) set -- -p 0 -n 16; n=16 ;; *) echo "pp or tg" >&2; exit 2 ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for r in 1 2; do
    "$Q" -cpu "$cpu" -plugin "$PWD/$P,out=$T/r$r" "$bin" bench "$model" -t 1 $PROFILE_ARGS "$@" -r "$r" >/dev/null 2>"$T/err" ||
        { echo "profile: $bin failed: $(tail -n 3 "$T/err")" >&2; exit 1; }
done
# symbols: address (Thumb's bit 0 cleared) and name, text only
"$NM" -n --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ { print $1, $3 }' >"$T/syms"
awk -v n="$n" -v top="$top" '
function hex(s,   i, c, v) { v = 0; s = tolower(s); for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c } return v }
FILENAME == ARGV[1] { a = hex($1); a -= a % 2; ns++; sa[ns] = a; sn[ns] = $2; next }
{ w = (FILENAME == ARGV[2]) ? -1 : 1; a = hex($1); lo = 1; hi = ns; f = "?"
  while (lo <= hi) { m = int((lo + hi) / 2); if (sa[m] <= a) { f = sn[m]; lo = m + 1 } else hi = m - 1 }
  c[f] += w * $2; tot += w * $2 }
END { for (f in c) if (c[f] > 0) printf "%10.3f M %5.1f%%  %s\n", c[f] / n / 1e6, 100 * c[f] / tot, f
      printf "%10.3f M total per %s token\n", tot / n / 1e6, (n == 64 ? "prompt" : "generated") > "/dev/stderr" }' \
    "$T/syms" "$T/r1" "$T/r2" 2>"$T/tot" | sort -k1 -n -r | head -n "$top"
cat "$T/tot"

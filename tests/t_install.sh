# What a newcomer does on a fresh clone: make demo, the help of every
# command, make install into a temporary PREFIX (and DESTDIR), the man page,
# pith run from the installed copy; and the service unit (boards/pith.service):
# valid for systemd-analyze verify, and loopback-only unless a key is given.
# The clone is of this checkout's HEAD with its uncommitted changes to
# tracked files applied (git diff HEAD): what `git commit -a` would commit.
# Files git does not track are not in it, so a source file that was never
# added fails here although the checkout builds. It sits beside a link to
# the fixtures, as a checkout beside ../shared/fixtures does.
. tests/lib.sh
SERVER=
cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
for tool in git make man systemd-analyze curl; do
    command -v $tool >/dev/null 2>&1 || { not_ok "$tool is not installed (toolchains/install-debian.sh)"; finish; }
done
FIXDIR=$(cd "$FIX" 2>/dev/null && pwd)
[ -n "$FIXDIR" ] || { not_ok "no fixtures at $FIX"; finish; }
C=$TMP/work/pith
mkdir -p "$TMP/work/shared" && ln -s "$FIXDIR" "$TMP/work/shared/fixtures"
if git clone -q "$(pwd)" "$C" 2>"$TMP/clone.err" && git diff HEAD --binary >"$TMP/wip.diff" &&
    { [ ! -s "$TMP/wip.diff" ] || git -C "$C" apply --binary "$TMP/wip.diff" 2>>"$TMP/clone.err"; }; then
    ok "git clone of HEAD $(git rev-parse --short HEAD), $(git diff HEAD --stat | tail -1 | sed 's/^ *//;s/^$/no uncommitted changes/')"
else not_ok "git clone: $(head -c 300 "$TMP/clone.err")"; finish; fi
CHECKOUT=$(pwd)
cd "$C" || { not_ok "cd $C"; finish; }
[ ! -e build ] && [ ! -e pith ] && ok "the clone has no build/ and no ./pith" || not_ok "the clone is not fresh"
M=$FIXDIR/models/stories260K.gguf

# README's quick start: make demo builds pith (a release build) and runs it.
# The release objects come from this checkout's build (make test built them
# from these sources; CI's make test builds them from nothing on its fresh
# clone): copied after the clone, so that they are newer than its sources,
# make links them rather than compiling them again. What a fresh build
# would catch that they hide, a source or header git does not track, is
# checked on the checkout's files.
untracked=$(git -C "$CHECKOUT" ls-files --others --exclude-standard -- 'src/*.[ch]' 'port/*.[ch]' 'tests/*.[ch]' | tr '\n' ' ')
[ -z "$untracked" ] && ok "every source and header of the build is tracked by git" \
    || not_ok "sources git does not track (a clone would not build): $untracked"
if [ -d "$CHECKOUT/build/rel" ]; then mkdir -p build && cp -r "$CHECKOUT/build/rel" build/rel; fi
if make -s -j2 demo >"$TMP/demo" 2>&1 && grep -q '^generation: 48 tokens' "$TMP/demo"; then ok "make demo"
else not_ok "make demo: $(tail -3 "$TMP/demo")"; fi
grep -q '^== pith run on stories260K' "$TMP/demo" && ok "make demo also runs stories260K from ../shared/fixtures" \
    || not_ok "make demo did not find ../shared/fixtures/models/stories260K.gguf"

# Help: top level lists every command and points to pith help COMMAND;
# each command's help three ways, the same text, exit 0, with an example.
check "pith --help exits 0" ./pith --help
grep -q 'help COMMAND' "$TMP/out" && ok "--help points to pith help COMMAND" || not_ok "--help: no 'help COMMAND'"
cmds=$(sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' "$TMP/out" | grep -vx help)
# the commands table (src/cli/cli.c: a row per command, its name first)
table=$(sed -n 's/^    {"\([a-z][a-z]*\)", .*/\1/p' src/cli/cli.c)
[ -n "$table" ] && [ "$(echo $cmds)" = "$(echo $table)" ] && ok "--help lists the $(echo $table | wc -w) commands of the table" \
    || not_ok "--help lists: $(echo $cmds); the table: $(echo $table)"
for c in $cmds; do
    ./pith help "$c" >"$TMP/h1" 2>&1; s1=$?
    ./pith "$c" --help >"$TMP/h2" 2>&1; s2=$?
    ./pith "$c" -h >"$TMP/h3" 2>&1; s3=$?
    if [ $s1$s2$s3 = 000 ] && cmp -s "$TMP/h1" "$TMP/h2" && cmp -s "$TMP/h1" "$TMP/h3" &&
        grep -q "^usage: pith $c MODEL" "$TMP/h1" && grep -q "^  pith $c model.gguf" "$TMP/h1" &&
        [ "$(grep -c '^  -' "$TMP/h1")" -ge 2 ]; then ok "help $c, $c --help, $c -h"
    else not_ok "help $c: status $s1 $s2 $s3: $(head -c 200 "$TMP/h1")"; fi
done
expect_fail2 "help of an unknown command" ./pith help nope
expect_fail2 "an unknown option names the help" ./pith run m.gguf --nope
grep -q 'see pith help run' "$TMP/err" && ok "unknown option: see pith help run" || not_ok "unknown option: $(cat "$TMP/err")"

# make install with PREFIX, then with DESTDIR; run from there.
P=$TMP/prefix
if make -s install PREFIX="$P" >"$TMP/inst" 2>&1 && [ -x "$P/bin/pith" ] && [ -f "$P/share/man/man1/pith.1" ]; then
    ok "make install PREFIX=..."
else not_ok "make install: $(tail -3 "$TMP/inst")"; fi
if make -s install PREFIX=/usr DESTDIR="$TMP/dest" >"$TMP/inst" 2>&1 && [ -x "$TMP/dest/usr/bin/pith" ] &&
    [ -f "$TMP/dest/usr/share/man/man1/pith.1" ]; then ok "make install DESTDIR=... PREFIX=/usr"
else not_ok "make install DESTDIR: $(tail -3 "$TMP/inst")"; fi
check "installed pith --version" "$P/bin/pith" --version
if (cd "$TMP" && "$P/bin/pith" run "$M" -p "Once upon a time" -n 8 --temp 0 >"$TMP/run" 2>"$TMP/err") &&
    [ -s "$TMP/run" ]; then ok "installed pith runs a model"
else not_ok "installed pith run: $(head -c 300 "$TMP/err")"; fi
# The man page: renders without a warning, and has every command and option of the help.
if MANWIDTH=100 man --warnings -l "$P/share/man/man1/pith.1" >"$TMP/man" 2>"$TMP/manerr" && [ ! -s "$TMP/manerr" ]; then
    ok "man page renders without warnings"
else not_ok "man page: $(head -c 300 "$TMP/manerr")"; fi
missing=
for c in $cmds; do
    grep -q "pith $c MODEL" "$TMP/man" || missing="$missing $c"
    for o in $(./pith help "$c" | sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr -d ,); do
        grep -q -- "$o" "$TMP/man" || missing="$missing $c:$o"
    done
done
[ -z "$missing" ] && ok "man page has every command and option" || not_ok "man page lacks:$missing"

# The unit: systemd-analyze verify, with the man page it names installed
# (Documentation=man:pith(1) is checked by running man). verify exits 0
# on warnings, so its stderr must be empty too.
U=boards/pith.service
if MANPATH="$P/share/man" systemd-analyze verify "$U" >"$TMP/v" 2>&1 && [ ! -s "$TMP/v" ]; then
    ok "systemd-analyze verify $U"
else not_ok "systemd-analyze verify $U: $(head -c 300 "$TMP/v")"; fi
sed 's/^Type=exec/Type=bogus/' "$U" >"$TMP/bad.service"
MANPATH="$P/share/man" systemd-analyze verify "$TMP/bad.service" >"$TMP/v" 2>&1
[ -s "$TMP/v" ] && ok "systemd-analyze verify reports a broken unit" || not_ok "a broken unit passed verify"
grep -q "^PREFIX ?= /usr/local$" Makefile && grep -q ' exec /usr/local/bin/pith serve' "$U" &&
    ok "the unit runs make install's default path" || not_ok "the unit's path is not PREFIX/bin/pith"

# The unit's command, as systemd would run it ($$ -> $), with the installed
# binary: no credential -> 127.0.0.1 even with PITH_HOST set; with the
# api-key credential -> PITH_HOST, /health open, the rest behind the key.
script=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$U" | sed -e 's/^ExecStart=//' -e 's/\\$//' | tr -d '\n' |
    sed -e 's/\$\$/$/g' -e "s|/usr/local/bin/pith|$P/bin/pith|g" | sed -n "s|^/bin/sh -c '\(.*\)'$|\1|p")
start_unit() { # prints the address the server reports
    env PITH_MODEL="$M" PITH_PORT=0 PITH_HOST=0.0.0.0 PITH_ARGS="-t 1" "$@" sh -c "$script" 2>"$TMP/unit.err" &
    SERVER=$!
    ADDR= i=0
    while [ $i -lt 100 ] && [ -z "$ADDR" ] && kill -0 "$SERVER" 2>/dev/null; do
        sleep 0.1
        ADDR=$(sed -n 's|^pith serve: .* on http://\([0-9.]*:[0-9]*\)/v1 .*|\1|p' "$TMP/unit.err")
        i=$((i + 1))
    done
}
stop_unit() { kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; SERVER=; }
start_unit
case "$ADDR" in 127.0.0.1:[1-9]*) ok "unit without a key: loopback ($ADDR)" ;;
    *) not_ok "unit without a key: '$ADDR': $(head -c 300 "$TMP/unit.err")" ;; esac
stop_unit
mkdir -p "$TMP/cred" && echo "unit-key-123" >"$TMP/cred/api-key"
start_unit CREDENTIALS_DIRECTORY="$TMP/cred"
case "$ADDR" in 0.0.0.0:[1-9]*) ok "unit with the key credential: PITH_HOST ($ADDR)" ;;
    *) not_ok "unit with a key: '$ADDR': $(head -c 300 "$TMP/unit.err")" ;; esac
port=${ADDR#*:}
h=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")
m=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/models")
k=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer unit-key-123' "http://127.0.0.1:$port/v1/models")
[ "$h $m $k" = "200 401 200" ] && ok "unit with the key: /health open, /v1/models needs the key" \
    || not_ok "unit with the key: /health $h, /v1/models $m without and $k with the key"
stop_unit
finish

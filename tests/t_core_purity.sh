# The core's objects reach the OS only through port/, and only the command
# layer ends the process (see tests/check_core.sh). Works with src/*.c and
# src/FOLDER/*.c (and one level deeper); an object whose source is gone
# (left over from an older layout) is skipped.
. tests/lib.sh
objs=
for o in build/rel/src/*.o build/rel/src/*/*.o build/rel/src/*/*/*.o; do
    [ -f "$o" ] || continue
    src=src/${o#build/rel/src/}
    [ -f "${src%.o}.c" ] && objs="$objs $o"
done
if [ -z "$objs" ]; then not_ok "core objects built (run make first)"; finish; fi
sh tests/check_core.sh $objs || failures=1
finish

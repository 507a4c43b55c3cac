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
# port/ allocates nothing either (so the heap of a pith process holds only
# libc's and libgomp's own, and port/main.c turns LeakSanitizer off for
# pith): no object of port/ references an allocation function.
port_objs=
for o in build/rel/port/*.o; do c=${o#build/rel/}; [ -f "${c%.o}.c" ] && port_objs="$port_objs $o"; done
if [ -z "$port_objs" ]; then not_ok "port objects built (run make first)"
else
    # shellcheck disable=SC2086 # port_objs: words
    alloc=$(nm -A -u $port_objs | awk '$NF ~ /^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|strdup|strndup|getline|getdelim|asprintf|vasprintf)$/ { print $1 $NF }' | tr '\n' ' ')
    [ -z "$alloc" ] && ok "port/ calls no allocation function ($(echo $port_objs | wc -w) objects)" \
        || not_ok "port/ objects allocate: $alloc"
fi
finish

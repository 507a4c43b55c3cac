# The code's layout (docs/architecture.md, "Folders of src/"): each folder of
# src/ includes only the folders below it, and no two files of the core
# depend on each other in a circle - checked on the sources' #include lines
# and on the compiled objects' symbols, so a call through a forward
# declaration counts too. A folder's subfolders (src/kernels/x86/ ...) are
# part of it.
. tests/lib.sh

# folder: the folders it may include (besides itself and port/)
allowed() {
    case "$1" in
        base) echo "" ;;
        arena) echo "base" ;;
        kernels) echo "base arena" ;;
        gguf) echo "base arena" ;;
        model) echo "base arena kernels gguf" ;;
        text) echo "base arena gguf" ;;
        engine) echo "base arena kernels gguf model text" ;;
        server) echo "base arena gguf text engine" ;;
        cli) echo "base arena gguf text engine server" ;;
        *) echo "?" ;;
    esac
}

folders=$(cd src && ls -d */ | tr -d /)
loose=$(ls src/*.c src/*.h 2>/dev/null)
[ -z "$loose" ] && ok "every file of src/ is in a folder" || not_ok "files outside the folders of src/: $loose"
bad=
for f in $folders; do
    [ "$(allowed "$f")" = "?" ] && bad="$bad $f"
    grep -l "This folder:" src/$f/*.h >/dev/null 2>&1 || bad="$bad $f(no main header saying what lives there)"
done
[ -z "$bad" ] && ok "every folder of src/ has its place in the order and a main header ($(echo $folders | tr '\n' ' '))" ||
    not_ok "folders without a place or a main header:$bad"

# includes, resolved from the including file's folder: a file of the same
# folder (or its subfolders), of an allowed folder, or port/port.h
bad=
for f in $folders; do
    ok_dirs=" $(allowed "$f") "
    for file in src/$f/*.c src/$f/*.h src/$f/*/*.c src/$f/*/*.h; do
        [ -e "$file" ] || continue
        for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file"); do
            p=$(realpath -m --relative-to=. "$(dirname "$file")/$inc")
            [ -e "$p" ] || { bad="$bad $file->$inc(missing)"; continue; }
            case "$p" in
                port/port.h) ;;
                src/*/*) d=${p#src/}; d=${d%%/*}
                         [ "$d" = "$f" ] && continue
                         case "$ok_dirs" in *" $d "*) ;; *) bad="$bad $file->$inc" ;; esac ;;
                *) bad="$bad $file->$inc" ;;
            esac
        done
    done
done
[ -z "$bad" ] && ok "each folder includes only itself, the folders below it and port/" ||
    not_ok "includes against the order:$bad"

# symbols: no circle of objects that call each other
objs=
for o in build/rel/src/*/*.o build/rel/src/*/*/*.o; do # objects of sources that still exist
    c=${o#build/rel/}; [ -e "${c%.o}.c" ] && objs="$objs $o"
done
if [ -z "$objs" ]; then not_ok "core objects built (run make first)"; finish; fi
# One nm for all the objects (a process each costs more than the reading):
# "FILE:ADDR TYPE NAME" for definitions, "FILE: U NAME" for uses.
# shellcheck disable=SC2086 # objs: words
nm -A --defined-only $objs | awk '{ i = index($0, ":"); split(substr($0, i + 1), w, " ") }
    w[2] ~ /^[TDBR]$/ { print "D", substr($0, 1, i - 1), w[3] }' >"$TMP/defs"
# shellcheck disable=SC2086
nm -A -u $objs | awk '{ print "U", substr($0, 1, index($0, ":") - 1), $NF }' >"$TMP/uses"
cycles=$(cat "$TMP/defs" "$TMP/uses" | awk '
    $1 == "D" { def[$3] = $2; files[$2] = 1; next }
    { use[++n] = $2 " " $3 }
    END {
        for (i = 1; i <= n; i++) { split(use[i], p, " "); d = def[p[2]]; if (d != "" && d != p[1]) reach[p[1], d] = 1 }
        for (k in files) for (i in files) if (reach[i, k]) for (j in files) if (reach[k, j]) reach[i, j] = 1
        for (i in files) if (reach[i, i]) print i
    }' | sort | tr '\n' ' ')
[ -z "$cycles" ] && ok "no two core objects depend on each other, directly or in a circle ($(echo $objs | wc -w) objects)" ||
    not_ok "objects in a dependency circle: $cycles"

# The commands and the server reach the model only through the engine: no
# object of src/server/ or src/cli/ uses a function or table defined under
# src/model/ or src/kernels/.
awk '$2 ~ /^build\/rel\/src\/(model|kernels)\// { print $3, $2 }' "$TMP/defs" | sort -u >"$TMP/inner"
bad=$(awk '$2 ~ /^build\/rel\/src\/(server|cli)\// { print $3, $2 }' "$TMP/uses" | sort -u |
    awk 'NR == FNR { def[$1] = $2; next } ($1 in def) { print $2 ": " $1 " (" def[$1] ")" }' "$TMP/inner" -)
[ -s "$TMP/inner" ] || not_ok "no symbols found in the model/ and kernels/ objects"
[ -z "$bad" ] && ok "server/ and cli/ use nothing defined in model/ or kernels/ (they go through the engine)" ||
    not_ok "server/ or cli/ objects use model/ or kernels/ symbols: $(echo "$bad" | tr '\n' ';')"
finish

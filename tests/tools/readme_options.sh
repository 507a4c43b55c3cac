#!/bin/sh
# readme_options.sh [--check] [FILE]: README's option rows, rewritten from
# the commands' option tables (the parser's and pith help's), so they cannot
# drift. Each block in FILE (default README.md) is a line
#
#   <!-- options: ARGS -->
#
# then the rows, then a line "<!-- end options -->". ARGS is a command
# (every option of it, as `pith help CMD` lists them), "CMD own" (its own
# rows only) or "group NAME" (one shared group: context, model, file,
# sampling, grammar, generation, template); `optdoc --groups CMD` lists a
# command's groups. The rows between the two lines are replaced; the rest
# of FILE is kept byte for byte.
#
#   sh tests/tools/readme_options.sh            rewrites README.md
#   sh tests/tools/readme_options.sh --check    exit 1 (and the diff) if README.md is not up to date
#
# The generator is tests/tools/main_optdoc.c, built here unless OPTDOC
# names one (tests/t_options.sh passes the ASan build's).
set -eu
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
file=${1:-$(dirname "$0")/../../README.md}
file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
cd "$(dirname "$0")/../.."
if [ -z "${OPTDOC:-}" ]; then
    OPTDOC=build/rel/tools/optdoc
    make -s "$OPTDOC" >/dev/null
fi
new=$(mktemp "${TMPDIR:-/tmp}/readme_options.XXXXXX")
trap 'rm -f "$new"' EXIT
"$OPTDOC" --readme "$file" >"$new"
if [ "$check" = 1 ]; then
    diff -u "$file" "$new" || { echo "$file: option rows out of date: sh tests/tools/readme_options.sh $file" >&2; exit 1; }
else
    cmp -s "$file" "$new" || cat "$new" >"$file"
fi

#!/bin/sh
# t_template_corpus.sh - pith's Jinja interpreter against jinja2, byte for
# byte, on the 70 chat templates llama.cpp keeps for its own tests
# (models/templates/*.jinja of the source npm's node-llama-cpp bundles,
# tests/llamacpp_src.sh) and the conversations of tests/templates/*.json.
# jinja2 renders as transformers does (tests/tools/jinja_ref.py, Debian's
# python3-jinja2); pith renders with tests/tools/main_jinja_render.c. Where
# jinja2 renders, pith's text must be the same bytes; where jinja2 raises,
# pith must refuse. One line per template; docs/templates.md explains.
. tests/lib.sh
RENDER=${RENDER:-build/asan/tools/jinja_render}
PYTHON=${PYTHON:-/usr/bin/python3}
WANT_TEMPLATES=70
# strftime_now's time, fixed for both sides: 2025-03-05 14:07:09 UTC
export SOURCE_DATE_EPOCH=1741183629

if src=$(sh tests/llamacpp_src.sh 2>"$TMP/src.err"); then ok "llama.cpp source at $src"
else not_ok "$(cat "$TMP/src.err")"; finish; fi
TDIR=$src/models/templates
templates=$(cd "$TDIR" && ls -- *.jinja 2>/dev/null | sed 's/\.jinja$//')
n_templates=$(echo "$templates" | grep -c .)
if [ "$n_templates" -eq "$WANT_TEMPLATES" ]; then ok "corpus: $n_templates templates in $TDIR"
else not_ok "corpus: $n_templates templates in $TDIR, want $WANT_TEMPLATES"; fi
cases=$(cd tests/templates && ls -- *.json | sed 's/\.json$//')
n_cases=$(echo "$cases" | grep -c .)

if ! "$PYTHON" -c 'import jinja2' 2>"$TMP/py.err"; then
    not_ok "jinja2 missing for $PYTHON (Debian's python3-jinja2, toolchains/install-debian.sh): $(tail -1 "$TMP/py.err")"
    finish
fi
# jinja2's texts change only with their inputs: kept in build/template-ref
# under a hash of all of them (jinja2 compiling 70 templates is most of
# this test's CPU time).
key=$( { echo "$SOURCE_DATE_EPOCH"; "$PYTHON" -c 'import jinja2; print(jinja2.__version__)';
    ls tests/templates "$TDIR"; cat tests/tools/jinja_ref.py tests/templates/*.json "$TDIR"/*.jinja; } |
    sha256sum | cut -c1-16)
REF=build/template-ref/$key
if [ ! -f "$REF/.complete" ]; then
    rm -rf build/template-ref && mkdir -p build/template-ref
    if ! "$PYTHON" tests/tools/jinja_ref.py "$REF.tmp" tests/templates/*.json -- "$TDIR"/*.jinja 2>"$TMP/ref.err"; then
        not_ok "jinja_ref.py failed: $(tail -c 300 "$TMP/ref.err")"; finish
    fi
    : >"$REF.tmp/.complete" && mv "$REF.tmp" "$REF"
fi
n_ref=$(ls "$REF" | grep -c '\.\(txt\|err\)$')
if [ "$n_ref" -eq $((n_templates * n_cases)) ]; then ok "jinja2: $n_ref renders ($n_templates templates x $n_cases cases)"
else not_ok "jinja2: $n_ref outputs, want $((n_templates * n_cases))"; fi
if ! "$RENDER" "$TMP/pith" tests/templates/*.json -- "$TDIR"/*.jinja >"$TMP/render.log" 2>&1; then
    not_ok "$RENDER stopped: $(tail -c 500 "$TMP/render.log")"
fi

# quote FILE OFFSET: 40 bytes of FILE from OFFSET (0-based), line ends
# shown as ↵ and ␍ (one line for the report; sh's echo reads backslashes).
quote() { tail -c +$(($2 + 1)) "$1" | head -c 40 | sed -z 's/\n/↵/g; s/\r/␍/g'; }
# differs CASE: why pith's render of $t for CASE is not jinja2's ("" when it is).
differs() {
    ref=$REF/$t@$1 out=$TMP/pith/$t@$1
    if [ -f "$ref.txt" ]; then
        if [ -f "$out.txt" ]; then
            cmp -s "$ref.txt" "$out.txt" && return
            c=$(cmp "$ref.txt" "$out.txt" 2>&1)
            case "$c" in
                *differ:*) off=$(($(echo "$c" | sed 's/.*differ: [a-z]* \([0-9]*\).*/\1/') - 1)) ;;
                *EOF*) off=$(echo "$c" | sed 's/.*after [a-z]* \([0-9]*\).*/\1/') ;;
                *) echo "$1: $c"; return ;;
            esac
            printf '%s\n' "$1: differs at byte $off: jinja2 [$(quote "$ref.txt" "$off")] pith [$(quote "$out.txt" "$off")]"
        elif [ -f "$out.err" ]; then
            echo "$1: jinja2 renders, pith refuses: $(head -c 200 "$out.err" | tr "\n" " ")"
        else
            echo "$1: no output from pith"
        fi
    elif [ -f "$out.txt" ]; then
        echo "$1: jinja2 raises ($(head -c 150 "$ref.err" | tr "\n" " ")), pith renders"
    elif [ ! -f "$out.err" ]; then
        echo "$1: no output from pith"
    fi
}

# In one pass, the templates with a pair whose outcome (.txt or .err)
# differs or whose texts differ (the messages of .err files are each side's
# own); only they are looked at case by case. The loop forks nothing for
# the others: it runs under a loaded make test.
ls "$REF" >"$TMP/ref.ls"
ls "$TMP/pith" >"$TMP/pith.ls" 2>/dev/null
differing=$({ diff "$TMP/ref.ls" "$TMP/pith.ls"; diff -rq -x '*.err' "$REF" "$TMP/pith"; } 2>&1 |
    sed -n 's/.*[ /]\([^ /@]*\)@.*/\1/p' | sort -u | tr '\n' ' ')
# each template and how many of its cases jinja2 refuses, in name order
for t in $templates; do echo "$t"; done |
    awk 'NR == FNR { if (sub(/\.err$/, "")) { sub(/@.*/, ""); n[$0]++ } next } { print $0, n[$0] + 0 }' \
        "$TMP/ref.ls" - >"$TMP/templates"
n_same=0
while read -r t refused; do
    bad=0 first=
    case " $differing " in *" $t "*)
        for c in $cases; do
            d=$(differs "$c")
            [ -z "$d" ] && continue
            bad=$((bad + 1))
            [ -n "$first" ] || first=$d
        done ;;
    esac
    if [ "$bad" -eq 0 ]; then
        n_same=$((n_same + 1))
        ok "template $t: as jinja2 on all $n_cases cases ($refused refused by both)"
    else
        not_ok "template $t: $bad of $n_cases cases differ; first: $first"
    fi
done <"$TMP/templates"
line="$n_same of $n_templates templates render as jinja2 does on all $n_cases cases"
if [ "$n_same" -eq "$WANT_TEMPLATES" ]; then ok "$line"; else echo "# $line"; fi
finish

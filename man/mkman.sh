#!/bin/sh
# mkman.sh PITH > pith.1: the man page, made from the binary's own help
# (pith --help, pith help COMMAND), so the two cannot disagree.
set -eu
PITH=${1:-./pith}
version=$("$PITH" --version | sed -n '1s/^pith //p')
cat <<HEAD
.TH PITH 1 "" "pith $version" "User Commands"
.SH NAME
pith \\- run GGUF language models on small boards
.SH SYNOPSIS
.B pith
.I COMMAND MODEL
.RI [ options ]
.br
.B pith help
.I COMMAND
.br
.B pith \\-\\-version
.SH DESCRIPTION
pith runs GGUF language models (Qwen3, Qwen2, Llama) on Raspberry Pi\\-class boards and on x86.
It is one static binary: it plans every byte it will use in one arena before any weight is read,
and keeps to a memory budget (\\fB\\-\\-mem\\fR), mapping, reading or streaming the weights as the budget allows.
Bad input (a malformed model file, a wrong argument) gets one line on standard error and exit status 2.
.SH COMMANDS
HEAD
"$PITH" --help | sed -n 's/^  \([a-z][a-z]*\)  *\(.*\)$/\1\t\2/p' | grep -v '^help' | while IFS='	' read -r cmd what; do
    printf '.SS "pith %s"\n' "$cmd"
    # e(): troff escapes (a backslash, a minus sign); no help line starts
    # with a dot or a quote.
    "$PITH" help "$cmd" | awk '
        function e(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); return s }
        NR == 2 { sub(/^usage: /, ""); printf ".B %s\n.PP\n", e($0); next }
        NR == 1 { sub(/^[^:]*: /, ""); printf "%s.\n.PP\n", e(toupper(substr($0, 1, 1)) substr($0, 2)); next }
        /^options:$/ { next }
        /^example:$/ { ex = 1; printf ".PP\nExample:\n.RS\n.nf\n"; next }
        ex { sub(/^  /, ""); print e($0); next }
        /^  [^ ]/ { opt = substr($0, 3, 24); sub(/ +$/, "", opt); rest = substr($0, 28)
                    printf ".TP\n.B %s\n%s\n", e(opt), e(rest); next }
        /^   +/ { sub(/^ +/, ""); print e($0); next }
        END { printf ".fi\n.RE\n" }'
done
cat <<'TAIL'
.SH EXIT STATUS
0 on success; 2 for bad input (arguments, model file, prompt), with one line on standard error.
.SH ENVIRONMENT
.TP
.B OMP_NUM_THREADS, OMP_PROC_BIND, OMP_PLACES
OpenMP's; \fB\-t\fR sets the thread count.
.SH SEE ALSO
README.md and docs/ in pith's source: models, memory, speed, the server's endpoints.
TAIL

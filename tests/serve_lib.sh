# serve_lib.sh - sourced after tests/lib.sh by the tests that start `pith
# serve`: the server's pid is in SERVER and it is stopped on exit.
#   serve_start BIN ARGS...  runs `BIN serve ARGS... --port 0` in the
#                            background (the kernel picks a free port) and
#                            reads the port from its first line: PORT, URL
#                            (PORT empty if it died or never said it)
#   stop_server              stops it and waits
SERVER=
cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
serve_start() {
    serve_bin=$1; shift
    $serve_bin serve "$@" --port 0 2>"$TMP/server.err" &
    SERVER=$!
    PORT=
    i=0
    while [ $i -lt 300 ] && [ -z "$PORT" ] && kill -0 "$SERVER" 2>/dev/null; do
        sleep 0.1
        PORT=$(sed -n 's|^pith serve: .* on http://127\.0\.0\.1:\([0-9]*\)/v1 .*|\1|p' "$TMP/server.err")
        i=$((i + 1))
    done
    URL=http://127.0.0.1:$PORT
}
stop_server() { kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; SERVER=; }

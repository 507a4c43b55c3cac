# The core's objects reach the OS only through port/ (see tests/check_core.sh).
. tests/lib.sh
objs=$(ls build/rel/src/*.o 2>/dev/null)
if [ -z "$objs" ]; then not_ok "core objects built (run make first)"; finish; fi
sh tests/check_core.sh $objs || failures=1
finish

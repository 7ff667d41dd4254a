#!/usr/bin/env bash
# gshmemrun end to end: a real job, a failing PE, signal forwarding, --timeout, --gpus, bad
# arguments. Usage: test_launcher.sh path/to/gshmemrun path/to/test_bootstrap
# Every step runs under `timeout`, so a hang fails the step instead of the suite.
set -u

RUN=${1:?usage: test_launcher.sh GSHMEMRUN TEST_BOOTSTRAP}
TB=${2:?usage: test_launcher.sh GSHMEMRUN TEST_BOOTSTRAP}
LIMIT=60
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
now() { date +%s.%N; }
elapsed_lt() { awk -v a="$1" -v b="$(now)" -v lim="$2" 'BEGIN { exit !(b - a < lim) }'; }

# 1. A 4-PE job of the bootstrap checks.
timeout $LIMIT "$RUN" -n 4 "$TB" --env >"$tmp/out" 2>"$tmp/err"
rc=$?
n=$(grep -c 'passed (env)' "$tmp/out")
if [ $rc -eq 0 ] && [ "$n" -eq 4 ]; then pass "gshmemrun -n 4 test_bootstrap --env"
else fail "gshmemrun -n 4 test_bootstrap --env: rc $rc, $n of 4 PEs passed"; cat "$tmp/out" "$tmp/err"; fi

# 2. One PE: no sockets at all.
timeout $LIMIT "$RUN" -n 1 "$TB" --env >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'rank 0 of 1 passed' "$tmp/out"; then pass "gshmemrun -n 1 test_bootstrap --env"
else fail "gshmemrun -n 1: rc $rc"; cat "$tmp/out" "$tmp/err"; fi

# 3. A failing PE: gshmemrun exits with its status, names it, and stops the others at once.
t0=$(now)
timeout $LIMIT "$RUN" -n 3 bash -c 'if [ "$GSHMEM_RANK" = 1 ]; then exit 7; fi; sleep 30' 2>"$tmp/err"
rc=$?
if [ $rc -eq 7 ] && elapsed_lt "$t0" 10 && grep -q 'PE 1 exited with status 7' "$tmp/err"; then pass "a PE exiting 7 stops the job with status 7"
else fail "PE exiting 7: rc $rc after $(awk -v a="$t0" -v b="$(now)" 'BEGIN{print b-a}') s"; cat "$tmp/err"; fi

# 4. A PE killed by a signal: 128 + signal.
timeout $LIMIT "$RUN" -n 2 bash -c 'ulimit -c 0; if [ "$GSHMEM_RANK" = 0 ]; then kill -SEGV $$; fi; sleep 30' 2>"$tmp/err"
rc=$?
if [ $rc -eq 139 ] && grep -q 'PE 0 killed by signal 11' "$tmp/err"; then pass "a PE killed by SIGSEGV gives status 139"
else fail "PE killed by SIGSEGV: rc $rc"; cat "$tmp/err"; fi

# 5. A PE that ignores SIGTERM is killed 5 s later.
t0=$(now)
timeout $LIMIT "$RUN" -n 2 bash -c 'trap "" TERM; if [ "$GSHMEM_RANK" = 1 ]; then sleep 1; exit 3; fi; sleep 30 & wait; wait' 2>"$tmp/err"
rc=$?
if [ $rc -eq 3 ] && elapsed_lt "$t0" 15 && grep -q 'SIGKILL' "$tmp/err"; then pass "a PE ignoring SIGTERM gets SIGKILL"
else fail "PE ignoring SIGTERM: rc $rc"; cat "$tmp/err"; fi

# 6. Signal forwarding: SIGTERM to gshmemrun ends it and every PE promptly.
"$RUN" -n 2 sleep 30 2>"$tmp/err" &
pid=$!
kids=""
for _ in $(seq 100); do
    kids=$(pgrep -P $pid | tr '\n' ' ')
    [ "$(echo $kids | wc -w)" -eq 2 ] && break
    sleep 0.05
done
t0=$(now)
kill -TERM $pid
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
    fail "gshmemrun still running 10 s after SIGTERM"; kill -KILL $pid
fi
wait $pid
rc=$?
left=""
for k in $kids; do kill -0 "$k" 2>/dev/null && left="$left $k"; done
if [ -n "$kids" ] && [ -z "$left" ] && [ $rc -eq 143 ] && elapsed_lt "$t0" 5; then pass "SIGTERM is forwarded (PEs $kids gone, status 143)"
else fail "SIGTERM forwarding: rc $rc, PEs seen '$kids', still alive '$left'"; cat "$tmp/err"; kill -KILL $left 2>/dev/null; fi

# 7. --timeout: everything stops and the status is 124.
t0=$(now)
timeout $LIMIT "$RUN" --timeout 1 -n 2 sleep 30 2>"$tmp/err"
rc=$?
if [ $rc -eq 124 ] && elapsed_lt "$t0" 5; then pass "--timeout 1 gives status 124"
else fail "--timeout: rc $rc"; cat "$tmp/err"; fi

# 8. --gpus: GSHMEM_DEVICE cycles through the list; CUDA_VISIBLE_DEVICES is left alone.
out=$(CUDA_VISIBLE_DEVICES=keep timeout $LIMIT "$RUN" -n 3 --gpus 2,5 bash -c 'echo "$GSHMEM_RANK $GSHMEM_LOCAL_RANK $GSHMEM_NRANKS $GSHMEM_DEVICE $CUDA_VISIBLE_DEVICES"' | sort)
want=$'0 0 3 2 keep\n1 1 3 5 keep\n2 2 3 2 keep'
if [ "$out" = "$want" ]; then pass "--gpus 2,5 sets GSHMEM_DEVICE per PE"
else fail "--gpus: got '$out'"; fi

# 9. Only PE 0 inherits the listening socket.
out=$(timeout $LIMIT "$RUN" -n 2 bash -c 'echo "$GSHMEM_RANK ${GSHMEM_BOOTSTRAP_LISTEN_FD:-none} $([ -n "${GSHMEM_BOOTSTRAP_LISTEN_FD:-}" ] && [ -e /proc/$$/fd/$GSHMEM_BOOTSTRAP_LISTEN_FD ] && echo open)"' | sort)
if echo "$out" | grep -qE '^0 [0-9]+ open$' && echo "$out" | grep -qE '^1 none *$'; then pass "the listener goes to PE 0 only"
else fail "listener inheritance: got '$out'"; fi

# 10. Bad arguments: non-zero status and a message naming the problem.
bad() {
    local want=$1; shift
    timeout $LIMIT "$RUN" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$want" "$tmp/err"; then pass "gshmemrun $*: '$want'"
    else fail "gshmemrun $*: rc $rc, expected a message with '$want'"; cat "$tmp/err"; fi
}
bad 'missing -n'
bad 'missing -n' true
bad 'number of PEs' -n 0 true
bad 'number of PEs' -n -2 true
bad 'number of PEs' -n abc true
bad 'missing the program' -n 2
bad 'missing the program' -n 2 ''
bad 'needs a value' -n
bad 'device ordinals' -n 2 --gpus 1,,2 true
bad 'device ordinals' -n 2 --gpus a true
bad 'device ordinals' -n 2 --gpus '' true
bad 'positive number' -n 2 --timeout -1 true
bad 'unknown option' -n 2 --bogus true
bad 'cannot run' -n 2 /nonexistent/program
timeout $LIMIT "$RUN" --help >"$tmp/out" 2>&1 && grep -q usage "$tmp/out" && pass "--help" || fail "--help"

if [ $failures -ne 0 ]; then echo "test_launcher: $failures check(s) failed"; exit 1; fi
echo "test_launcher: all checks passed"

#!/usr/bin/env bash
# gshmemrun end to end: a real job, a failing PE, signal forwarding, --timeout, --gpus, PE 0
# reading the terminal (under a pty), stopped PEs, no process left behind (a killed launcher,
# background children, setsid'd ones), PEs exiting 0 without shmem_finalize, the MPS warning and
# --mps (with stand-ins for the NVIDIA tools), bad arguments.
# Usage: test_launcher.sh path/to/gshmemrun path/to/test_bootstrap
# Every step runs under `timeout`, so a hang fails the step instead of the suite.
set -u

RUN=${1:?usage: test_launcher.sh GSHMEMRUN TEST_BOOTSTRAP}
TB=${2:?usage: test_launcher.sh GSHMEMRUN TEST_BOOTSTRAP}
LIMIT=60
source "$(dirname "$0")/harness.sh"

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

# 6. Signal forwarding: SIGTERM to gshmemrun ends it and every PE promptly (its children: 2 PEs
# and the guardian).
"$RUN" -n 2 sleep 30 2>"$tmp/err" &
pid=$!
kids=""
for _ in $(seq 100); do
    kids=$(pgrep -P $pid | tr '\n' ' ')
    [ "$(echo $kids | wc -w)" -eq 3 ] && break
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
out=$(CUDA_VISIBLE_DEVICES=keep timeout $LIMIT "$RUN" -n 3 --gpus 2,5 bash -c 'echo "$GSHMEM_RANK $GSHMEM_LOCAL_RANK $GSHMEM_NRANKS $GSHMEM_DEVICE $CUDA_VISIBLE_DEVICES"' 2>"$tmp/err" | sort)
want=$'0 0 3 2 keep\n1 1 3 5 keep\n2 2 3 2 keep'
if [ "$out" = "$want" ]; then pass "--gpus 2,5 sets GSHMEM_DEVICE per PE"
else fail "--gpus: got '$out'"; fi

# 9. Only PE 0 inherits the listening socket.
out=$(timeout $LIMIT "$RUN" -n 2 bash -c 'echo "$GSHMEM_RANK ${GSHMEM_BOOTSTRAP_LISTEN_FD:-none} $([ -n "${GSHMEM_BOOTSTRAP_LISTEN_FD:-}" ] && [ -e /proc/$$/fd/$GSHMEM_BOOTSTRAP_LISTEN_FD ] && echo open)"' | sort)
if echo "$out" | grep -qE '^0 [0-9]+ open$' && echo "$out" | grep -qE '^1 none *$'; then pass "the listener goes to PE 0 only"
else fail "listener inheritance: got '$out'"; fi

# Processes of group $1 that are not zombies.
group_members() {
    local g=$1 d s rest
    for d in /proc/[0-9]*; do
        s=$(cat "$d/stat" 2>/dev/null) || continue
        rest=${s##*) }
        set -- $rest # state ppid pgrp ...
        [ "$3" = "$g" ] && [ "$1" != Z ] && echo "${d#/proc/}"
    done
}
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
wait_for() { # wait_for SECONDS command...: polls every 0.05 s
    local end=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -ge $end ] && return 1
        sleep 0.05
    done
}

# A pty harness: ptyrun.py LIMIT CMD [TRIGGER FEED]...: runs sh -c CMD as a session leader on a
# new pseudo-terminal (so in its foreground group); for each pair in turn, once every word of
# TRIGGER ('|'-separated) is in the output (since the last feed), waits 0.3 s and types FEED;
# prints the output, and kills CMD after LIMIT seconds.
cat >"$tmp/ptyrun.py" <<'PYEOF'
import os, pty, select, sys, time
limit, cmd = float(sys.argv[1]), sys.argv[2]
steps = [(sys.argv[i], sys.argv[i + 1].encode().decode("unicode_escape").encode("latin-1")) for i in range(3, len(sys.argv) - 1, 2)]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", cmd])
out, t0, mark = b"", time.time(), 0
while True:
    if steps and all(w.encode() in out[mark:] for w in steps[0][0].split("|") if w):
        time.sleep(0.3)
        os.write(fd, steps.pop(0)[1])
        mark = len(out)
    if time.time() - t0 > limit:
        os.kill(pid, 9)
        out += b"\n[pty harness: still running after %g s; killed]\n" % limit
        break
    if select.select([fd], [], [], 0.05)[0]:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace").replace("\r", ""))
print("[elapsed %.1f]" % (time.time() - t0))
PYEOF
printf 'import os\nprint("terminal back:", os.tcgetpgrp(0) == os.getpgrp())\n' >"$tmp/fg.py"
elapsed_of() { sed -n 's/^\[elapsed \(.*\)\]$/\1/p' "$1"; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 < b + 0) }'; }

# 11. PE 0 reads a line from the terminal: the job ends at once with the line, and the
# terminal's foreground comes back to the launcher's group. (It used to get SIGTTIN: every PE
# stopped until --timeout.)
cat >"$tmp/pe_read.sh" <<'SHEOF'
if [ "$GSHMEM_RANK" = 0 ]; then IFS= read -r line; echo "PE 0 read [$line]"; else echo "PE $GSHMEM_RANK ready"; fi
SHEOF
python3 "$tmp/ptyrun.py" 20 "$RUN -n 2 --timeout 10 bash $tmp/pe_read.sh; echo rc=\$?; python3 $tmp/fg.py" "" 'hello from the terminal\n' >"$tmp/out" 2>&1
if grep -q 'PE 0 read \[hello from the terminal\]' "$tmp/out" && grep -q '^rc=0$' "$tmp/out" && grep -q 'terminal back: True' "$tmp/out" &&
    lt "$(elapsed_of "$tmp/out")" 5; then pass "PE 0 reads the terminal (a pty); the job ends in $(elapsed_of "$tmp/out") s"
else fail "PE 0 reading the terminal"; cat "$tmp/out"; fi

# 12. Ctrl-C on the terminal reaches the PEs (their group holds the foreground): status 130,
# and the shell that ran gshmemrun goes on.
cat >"$tmp/pe_sleep.sh" <<'SHEOF'
echo "PE $GSHMEM_RANK ready"; sleep 30
SHEOF
python3 "$tmp/ptyrun.py" 20 "$RUN -n 2 --timeout 15 bash $tmp/pe_sleep.sh; echo rc=\$?" 'PE 0 ready|PE 1 ready' '\x03' >"$tmp/out" 2>&1
if grep -q '^rc=130$' "$tmp/out" && grep -q 'killed by signal 2' "$tmp/out" && lt "$(elapsed_of "$tmp/out")" 5; then pass "Ctrl-C reaches the PEs (status 130)"
else fail "Ctrl-C on the terminal"; cat "$tmp/out"; fi

# 13. Ctrl-Z stops the PEs: gshmemrun names them, says there is no job control to stop with them
# (sh -c is no job-control shell), and --timeout still ends the job without needing SIGKILL.
python3 "$tmp/ptyrun.py" 20 "$RUN -n 2 --timeout 3 bash $tmp/pe_sleep.sh; echo rc=\$?" 'PE 0 ready|PE 1 ready' '\x1a' >"$tmp/out" 2>&1
if grep -qE 'PEs? [0-9, ]+ stopped by signal 20' "$tmp/out" && grep -q 'no job control here' "$tmp/out" && grep -q '^rc=124$' "$tmp/out" &&
    ! grep -q SIGKILL "$tmp/out" && lt "$(elapsed_of "$tmp/out")" 7; then pass "Ctrl-Z: the stopped PEs are named; --timeout still ends the job"
else fail "Ctrl-Z on the terminal"; cat "$tmp/out"; fi

# 13b. The same under a job-control shell (interactive bash): Ctrl-Z stops gshmemrun with its
# PEs, so bash reports the job stopped; after 'fg' the PEs get the terminal back and PE 0 reads
# the next line typed.
cat >"$tmp/pe_fg.sh" <<'SHEOF'
if [ "$GSHMEM_RANK" = 0 ]; then echo "PE 0 waits"; IFS= read -r line; echo "PE 0 got [$line]"; fi
SHEOF
python3 "$tmp/ptyrun.py" 30 "exec env -u PROMPT_COMMAND PS1='$ ' bash --norc --noprofile -i" \
    '' "$RUN -n 2 --timeout 25 bash $tmp/pe_fg.sh\n" 'PE 0 waits' '\x1a' 'Stopped' 'fg\n' '' 'typed after fg\n' \
    'PE 0 got' 'echo job$(echo rc):$?\n' 'jobrc:' 'exit\n' >"$tmp/out" 2>&1
if grep -q 'Stopped' "$tmp/out" && grep -qE 'PEs? [0-9, ]*0[0-9, ]* stopped by signal 20' "$tmp/out" &&
    grep -q 'PE 0 got \[typed after fg\]' "$tmp/out" && grep -q 'jobrc:0$' "$tmp/out" && ! grep -q 'no job control' "$tmp/out" &&
    lt "$(elapsed_of "$tmp/out")" 20; then pass "Ctrl-Z under bash -i stops the job; fg gives PE 0 the terminal back"
else fail "Ctrl-Z and fg under an interactive bash"; cat "$tmp/out"; fi

# 14. A PE stopped by SIGSTOP is named by rank; SIGCONT to gshmemrun continues it.
"$RUN" -n 2 --timeout 20 bash -c 'if [ "$GSHMEM_RANK" = 1 ]; then kill -STOP $$; echo "PE 1 resumed"; fi' >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for 10 grep -q 'PE 1 stopped by signal 19' "$tmp/err" && kill -CONT $pid
wait $pid
rc=$?
if [ $rc -eq 0 ] && grep -q 'PE 1 resumed' "$tmp/out" && grep -q 'SIGCONT to gshmemrun' "$tmp/err"; then pass "a stopped PE is named; SIGCONT to gshmemrun continues it"
else fail "stopped PE: rc $rc"; cat "$tmp/out" "$tmp/err"; fi

# 15. A SIGKILLed gshmemrun leaves nothing behind: its PEs die with it (PR_SET_PDEATHSIG) and
# the guardian stops the rest of their group (here a background sleep in each PE).
rm -f "$tmp"/bg.*
"$RUN" -n 2 bash -c 'sleep 300 & echo $! >"$0/bg.$GSHMEM_RANK"; sleep 300' "$tmp" >/dev/null 2>"$tmp/err" &
pid=$!
wait_for 10 test -s "$tmp/bg.0" -a -s "$tmp/bg.1"
pes=$(pgrep -P $pid | tr '\n' ' ')
bgs="$(cat "$tmp/bg.0" "$tmp/bg.1" 2>/dev/null | tr '\n' ' ')"
pgid=$(ps -o pgid= -p "$(cat "$tmp/bg.0" 2>/dev/null)" 2>/dev/null | tr -d ' ')
t0=$(now)
kill -KILL $pid
wait $pid 2>/dev/null
gone() {
    [ -z "$(group_members "$pgid")" ] || return 1
    for p in $pes $bgs; do alive "$p" && return 1; done
    return 0
}
if [ -n "$pgid" ] && [ "$(echo $bgs | wc -w)" -eq 2 ] && wait_for 10 gone && grep -q 'launcher (pid [0-9]*) died' "$tmp/err"; then
    pass "a SIGKILLed gshmemrun leaves no process of group $pgid ($(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}') s)"
else
    fail "SIGKILLed gshmemrun: group '$pgid' left '$(group_members "$pgid" | tr '\n' ' ')', PEs '$pes', background '$bgs'"
    cat "$tmp/err"
    kill -KILL $pes $bgs $(group_members "$pgid") 2>/dev/null
fi

# 16. Background children of a successful job are gone when gshmemrun returns, even one that
# ignores SIGTERM (it gets SIGKILL after a short grace).
rm -f "$tmp"/bg.*
t0=$(now)
timeout $LIMIT "$RUN" -n 2 bash -c 'trap "" TERM; sleep 300 >/dev/null 2>&1 & echo $! >"$0/bg.$GSHMEM_RANK"' "$tmp" >"$tmp/out" 2>"$tmp/err"
rc=$?
bgs="$(cat "$tmp/bg.0" "$tmp/bg.1" 2>/dev/null | tr '\n' ' ')"
left=""
for p in $bgs; do alive "$p" && left="$left $p"; done
if [ $rc -eq 0 ] && [ "$(echo $bgs | wc -w)" -eq 2 ] && [ -z "$left" ] && elapsed_lt "$t0" 5 && grep -q 'left processes running' "$tmp/err"; then
    pass "background children of a successful job are stopped (rc 0)"
else fail "background children: rc $rc, started '$bgs', still alive '$left'"; cat "$tmp/err"; kill -KILL $left 2>/dev/null; fi

# 16b. So are processes a PE moved out of its group (setsid), which come back to gshmemrun as
# child subreaper: a setsid'd sleep, and a setsid'd shell whose own child is handed to gshmemrun
# when the shell goes; all ignore SIGTERM, so each needs the SIGKILL.
rm -f "$tmp"/sid.*
t0=$(now)
timeout $LIMIT "$RUN" -n 2 bash -c '
    trap "" TERM
    if [ "$GSHMEM_RANK" = 0 ]; then
        setsid bash -c "echo \$\$ >\"\$0/sid.0\"; exec sleep 445" "$0" </dev/null >/dev/null 2>&1 &
    else
        setsid bash -c "sleep 445 & echo \$\$ >\"\$0/sid.1b\"; echo \$! >\"\$0/sid.1\"; wait" "$0" </dev/null >/dev/null 2>&1 &
    fi
    for _ in $(seq 500); do [ -s "$0/sid.$GSHMEM_RANK" ] && break; sleep 0.01; done' "$tmp" >"$tmp/out" 2>"$tmp/err"
rc=$?
sids="$(cat "$tmp/sid.0" "$tmp/sid.1" "$tmp/sid.1b" 2>/dev/null | tr '\n' ' ')"
left=""
for p in $sids; do alive "$p" && left="$left $p"; done
if [ $rc -eq 0 ] && [ "$(echo $sids | wc -w)" -eq 3 ] && [ -z "$left" ] && elapsed_lt "$t0" 8 && grep -q 'left processes running' "$tmp/err"; then
    pass "processes the PEs moved out of their group (setsid) are stopped too"
else fail "setsid'd leftovers: rc $rc, started '$sids', still alive '$left'"; cat "$tmp/err"; kill -KILL $left 2>/dev/null; fi

# 20. A PE that exits with status 0 while others run: fine from shmem_finalize on; else, once a
# PE of the job has called shmem_init, named at once and the job stopped with status 1.
# test_bootstrap --note records a PE's state as shmem_init (I), shmem_finalize (F) and
# shmem_global_exit (X) do; --env runs the uid bootstrap with the same notes as the runtime.
early() { # name, expected status, most seconds, text stderr must hold ('' none; !TEXT: must not), script
    local name=$1 want=$2 most=$3 text=$4 t0 rc ok=1
    t0=$(now)
    env -u GSHMEM_BOOTSTRAP_TIMEOUT timeout $LIMIT "$RUN" -n 2 bash -c "$5" "$TB" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq "$want" ] && elapsed_lt "$t0" "$most" || ok=0
    case $text in
    '') ;;
    '!'*) ! grep -q -- "${text#!}" "$tmp/err" || ok=0 ;;
    *) grep -q -- "$text" "$tmp/err" || ok=0 ;;
    esac
    if [ $ok = 1 ]; then pass "$name (status $rc in $(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}') s)"
    else fail "$name: status $rc after $(awk -v a="$t0" -v b="$(now)" 'BEGIN{print b-a}') s, wanted $want within $most s and '$text'"; cat "$tmp/out" "$tmp/err"; fi
}
# the bootstrap waits its full 120 s for a rank that will never come, unless gshmemrun steps in
early "PE 1 exits 0 before shmem_init while PE 0 waits in it" 1 8 'PE 1 exited with status 0 without shmem_finalize (it never called shmem_init) while PE 0 takes part' \
    'if [ "$GSHMEM_RANK" = 1 ]; then exit 0; fi; exec "$0" --env'
early "PE 1 exits 0 after shmem_init without shmem_finalize" 1 8 'PE 1 exited with status 0 after shmem_init, without shmem_finalize, while 1 PE still runs' \
    'if [ "$GSHMEM_RANK" = 1 ]; then exec "$0" --note I; fi; sleep 60'
early "PE 0 calls shmem_init after PE 1 finalized and left" 1 8 'PE 0 is between shmem_init and shmem_finalize, but PE 1 finalized and exited' \
    'if [ "$GSHMEM_RANK" = 1 ]; then "$0" --note I; exec "$0" --note F; fi; "$0" --note I; sleep 0.3; "$0" --note F; sleep 0.3; "$0" --note I; sleep 60'
early "a PE that finalized may exit long before the others" 0 8 '!shmem_finalize' \
    '"$0" --note I; "$0" --note F; if [ "$GSHMEM_RANK" = 0 ]; then sleep 1.5; fi'
early "PEs of a program without shmem_init end when they like" 0 8 '!shmem_' \
    'if [ "$GSHMEM_RANK" = 0 ]; then sleep 1.5; fi'
early "shmem_global_exit(0) ends the job with status 0" 0 5 'PE 1 called shmem_global_exit(0); stopping the other 1 PE' \
    'if [ "$GSHMEM_RANK" = 1 ]; then exec "$0" --note X; fi; "$0" --note I; sleep 60'
# 4 normal jobs in a row: PEs that finalize together never trip the rule
ok=1
for _ in 1 2 3 4; do
    timeout $LIMIT "$RUN" -n 4 "$TB" --env >"$tmp/out" 2>"$tmp/err" || ok=0
    grep -q 'without shmem_finalize' "$tmp/err" && ok=0
done
if [ $ok = 1 ]; then pass "4 jobs of 4 PEs finalizing together: no early exit reported"
else fail "a normal job reported an early exit"; cat "$tmp/err"; fi
# a stray GSHMEM_LAUNCHER_FD (here a plain file) is never written into, and a warning says why
: >"$tmp/stray"
GSHMEM_LAUNCHER_FD=7 GSHMEM_RANK=0 "$TB" --note I 7<>"$tmp/stray" 2>"$tmp/err"
if [ ! -s "$tmp/stray" ] && grep -q "GSHMEM_LAUNCHER_FD=7 is not gshmemrun's sealed file" "$tmp/err"; then pass "a stray GSHMEM_LAUNCHER_FD is left alone, with a warning"
else fail "stray GSHMEM_LAUNCHER_FD: file holds '$(od -c "$tmp/stray" | head -2)'"; cat "$tmp/err"; fi

# 17. PEs sharing a GPU: one warning naming --mps when no MPS daemon runs; none with a daemon, a
# GPU each, or one PE. Stand-ins for nvidia-smi and nvidia-cuda-mps-control make it host-independent.
mkdir -p "$tmp/bin1" "$tmp/bin0" "$tmp/nomps" "$tmp/mpsdir"
printf '#!/bin/sh\n[ "$1" = -L ] && echo "GPU 0: Stand-in GPU (UUID: GPU-0)"\nexit 0\n' >"$tmp/bin1/nvidia-smi"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >"$tmp/bin0/nvidia-smi"
# Like the real one (seen on an H100 host): -d makes the control pipe at once and writes logs;
# quit leaves control, control_lock and control_privileged in the pipe folder.
cat >"$tmp/bin1/nvidia-cuda-mps-control" <<'SHEOF'
#!/bin/sh
log=${FAKE_MPS_LOG:?}
if [ "$1" = -d ]; then
    echo "start pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY pct=${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-unset}" >>"$log"
    mkfifo "$CUDA_MPS_PIPE_DIRECTORY/control" "$CUDA_MPS_PIPE_DIRECTORY/control_privileged"
    touch "$CUDA_MPS_PIPE_DIRECTORY/control_lock" "$CUDA_MPS_LOG_DIRECTORY/control.log"
    exit 0
fi
read -r cmd
echo "$cmd pipe=$CUDA_MPS_PIPE_DIRECTORY" >>"$log"
SHEOF
chmod +x "$tmp"/bin1/* "$tmp"/bin0/*
cp "$tmp/bin1/nvidia-smi" "$tmp/nomps/nvidia-smi"
mkfifo "$tmp/mpsdir/control"
plain() { env -u CUDA_VISIBLE_DEVICES -u CUDA_MPS_ACTIVE_THREAD_PERCENTAGE "$@"; }
plain CUDA_MPS_PIPE_DIRECTORY="$tmp/none" PATH="$tmp/bin1:$PATH" timeout $LIMIT "$RUN" -n 2 true 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c 'no MPS daemon' "$tmp/err")" -eq 1 ] && grep -q -- '--mps' "$tmp/err"; then pass "2 PEs on 1 GPU without MPS: one warning naming --mps"
else fail "MPS warning: rc $rc"; cat "$tmp/err"; fi
plain CUDA_MPS_PIPE_DIRECTORY="$tmp/none" timeout $LIMIT "$RUN" -n 3 --gpus 0 true 2>"$tmp/err"
if grep -q 'up to 3 on one' "$tmp/err"; then pass "--gpus 0 with 3 PEs: the warning"; else fail "--gpus 0 warning"; cat "$tmp/err"; fi
for quiet in "CUDA_MPS_PIPE_DIRECTORY=$tmp/mpsdir -n 2" "CUDA_MPS_PIPE_DIRECTORY=$tmp/none -n 2 --gpus 0,1" "CUDA_MPS_PIPE_DIRECTORY=$tmp/none -n 1"; do
    set -- $quiet
    plain "$1" PATH="$tmp/bin1:$PATH" timeout $LIMIT "$RUN" "${@:2}" true 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 0 ] && ! grep -q warning "$tmp/err"; then pass "no MPS warning with ${quiet#*$tmp/}"
    else fail "MPS warning with $quiet: rc $rc"; cat "$tmp/err"; fi
done

# 18. --mps: a private daemon (its own pipe and log folders), the PEs inherit it with half the
# SMs each, and it is quit with the same environment after the job: after success, failure,
# --timeout, and a killed launcher (the guardian quits it).
mps_run() { plain -u CUDA_MPS_PIPE_DIRECTORY -u CUDA_MPS_LOG_DIRECTORY FAKE_MPS_LOG="$tmp/mps.log" PATH="$tmp/bin1:$PATH" "$@"; }
mps_quit_ok() { # the log says start, then quit for the same pipe folder, which is gone now
    local dir
    dir=$(sed -n 's/^start pipe=\([^ ]*\) .*/\1/p' "$tmp/mps.log" 2>/dev/null)
    [ -n "$dir" ] && grep -qx "quit pipe=$dir" "$tmp/mps.log" && [ ! -e "$dir" ]
}
rm -f "$tmp/mps.log"
out=$(mps_run timeout $LIMIT "$RUN" -n 2 --mps bash -c 'echo "$GSHMEM_RANK $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE $([ -p "$CUDA_MPS_PIPE_DIRECTORY/control" ] && echo running)"' 2>"$tmp/err")
rc=$?
out=$(echo "$out" | sort)
dir=$(sed -n 's/^start pipe=\([^ ]*\) .*/\1/p' "$tmp/mps.log" 2>/dev/null)
if [ $rc -eq 0 ] && [ -n "$dir" ] && [ "$out" = "0 $dir 50 running"$'\n'"1 $dir 50 running" ] && mps_quit_ok &&
    grep -q 'private MPS daemon' "$tmp/err" && ! grep -q warning "$tmp/err"; then pass "--mps: a private daemon, 50% of the SMs per PE, quit after the job"
else fail "--mps: rc $rc, PEs saw '$out'"; cat "$tmp/mps.log" "$tmp/err"; fi
rm -f "$tmp/mps.log"
out=$(mps_run CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30 timeout $LIMIT "$RUN" -n 2 --mps bash -c 'echo $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE' 2>/dev/null | sort -u)
if [ "$out" = 30 ] && mps_quit_ok; then pass "--mps keeps a CUDA_MPS_ACTIVE_THREAD_PERCENTAGE already set"
else fail "--mps with a set percentage: '$out'"; cat "$tmp/mps.log"; fi
rm -f "$tmp/mps.log"
mps_run timeout $LIMIT "$RUN" -n 2 --mps bash -c 'exit 3' 2>"$tmp/err"
rc=$?
if [ $rc -eq 3 ] && mps_quit_ok && grep -q 'MPS logs are in' "$tmp/err"; then pass "--mps: the daemon is quit after a failed job"
else fail "--mps after a failure: rc $rc"; cat "$tmp/mps.log" "$tmp/err"; fi
rm -rf "$tmp/mps.log" $(sed -n 's/^.*MPS logs are in \(.*\)$/\1/p' "$tmp/err")
mps_run timeout $LIMIT "$RUN" -n 2 --mps --timeout 1 sleep 30 2>"$tmp/err"
rc=$?
if [ $rc -eq 124 ] && mps_quit_ok; then pass "--mps: the daemon is quit after --timeout"
else fail "--mps after --timeout: rc $rc"; cat "$tmp/mps.log" "$tmp/err"; fi
rm -rf "$tmp/mps.log" $(sed -n 's/^.*MPS logs are in \(.*\)$/\1/p' "$tmp/err")
env -u CUDA_VISIBLE_DEVICES -u CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -u CUDA_MPS_PIPE_DIRECTORY -u CUDA_MPS_LOG_DIRECTORY \
    FAKE_MPS_LOG="$tmp/mps.log" PATH="$tmp/bin1:$PATH" "$RUN" -n 2 --mps sleep 30 2>"$tmp/err" &
pid=$! # env execs gshmemrun: the same process
wait_for 10 grep -q '^start' "$tmp/mps.log"
sleep 0.3
kill -KILL $pid
wait $pid 2>/dev/null
if wait_for 15 mps_quit_ok; then pass "--mps: the guardian quits the daemon when gshmemrun is killed"
else fail "--mps after SIGKILL of gshmemrun"; cat "$tmp/mps.log" "$tmp/err"; fi
rm -rf $(sed -n 's/^.*MPS logs are in \(.*\)$/\1/p' "$tmp/err")

# 19. --mps where it cannot work fails at once, naming why.
plain PATH="$tmp/bin0:$PATH" timeout $LIMIT "$RUN" -n 2 --mps true 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q -- '--mps: this host has no NVIDIA GPU' "$tmp/err"; then pass "--mps without a GPU fails: $(head -1 "$tmp/err")"
else fail "--mps without a GPU: rc $rc"; cat "$tmp/err"; fi
plain PATH="$tmp/nomps" "$RUN" -n 2 --mps true 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q 'nvidia-cuda-mps-control is not in PATH' "$tmp/err"; then pass "--mps without nvidia-cuda-mps-control fails, naming it"
else fail "--mps without nvidia-cuda-mps-control: rc $rc"; cat "$tmp/err"; fi
if ! command -v nvidia-smi >/dev/null && [ ! -d /proc/driver/nvidia/gpus ]; then
    timeout $LIMIT "$RUN" -n 2 --mps true 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ] && grep -q 'no NVIDIA GPU' "$tmp/err"; then pass "--mps on this GPU-less host fails: $(head -1 "$tmp/err")"
    else fail "--mps on this GPU-less host: rc $rc"; cat "$tmp/err"; fi
fi

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

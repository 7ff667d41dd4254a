#!/usr/bin/env bash
# `srun --mpi=pmix` through gshmem's PMIx bootstrap: a one-node Slurm cluster started here for
# the test (slurmctld and slurmd from the package archive, auth/none, ports of its own, state in a
# temporary folder), a 4-rank job of the bootstrap test program (its allgather, barrier, bcast and
# their refusals over PMIx), then the cluster stopped. Skipped (77), saying why, where Slurm or its
# PMIx plugin is missing or the daemons cannot start (they must run as root here).
# Usage: test_srun.sh TEST_BOOTSTRAP
set -u
prog=$1
skip() { echo "test_srun: skipped: $*"; exit 77; }
fail() { echo "test_srun: $*" >&2; [ -n "${dir:-}" ] && tail -5 "$dir"/slurm*.log >&2; exit 1; }
for c in slurmctld slurmd srun sinfo scontrol; do command -v $c >/dev/null 2>&1 || skip "no $c (install slurmctld, slurmd, slurm-wlm-basic-plugins)"; done
[ "$(id -u)" = 0 ] || skip "the test cluster's daemons run as root, and this is uid $(id -u)"

dir=$(mktemp -d /tmp/gshmem-srun-XXXXXX)
node=$(hostname -s)
port=$((20000 + RANDOM % 20000))
export SLURM_CONF=$dir/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=gshmemtest
SlurmctldHost=$node
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=gshmem Nodes=$node Default=YES MaxTime=5 State=UP
CONF
mkdir -p "$dir/state" "$dir/spool"
stop() {
    local pids=""
    for f in "$dir/slurmd.pid" "$dir/slurmctld.pid"; do [ -f "$f" ] && pids+=" $(cat "$f")"; done
    scontrol shutdown >/dev/null 2>&1
    for _ in $(seq 50); do
        alive=0
        for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    pkill -9 -f "slurmstepd.*$dir" 2>/dev/null
    rm -rf "$dir"
}
trap stop EXIT
slurmctld -f "$SLURM_CONF" >/dev/null 2>&1 || skip "slurmctld does not start here"
slurmd -f "$SLURM_CONF" >/dev/null 2>&1 || skip "slurmd does not start here"
up=0
for _ in $(seq 100); do
    sinfo -h -o %t 2>/dev/null | grep -qx idle && { up=1; break; }
    sleep 0.2
done
[ $up = 1 ] || skip "the one-node cluster did not come up within 20 s ($(sinfo -h -o %t 2>&1 | head -1))"
srun --mpi=list 2>&1 | grep -q pmix || skip "Slurm has no PMIx plugin (slurm-wlm-basic-plugins ships mpi_pmix_v4)"

# -O: 4 ranks on however few cores this host has
out=$(timeout 120 srun -O -N 1 -n 4 --mpi=pmix "$prog" --pmix 2>&1) || fail "srun --mpi=pmix -n 4 exited $?: $out"
n=$(grep -c '^test_bootstrap: rank [0-3] of 4 passed (pmix)$' <<<"$out")
[ "$n" = 4 ] || fail "$n of 4 ranks passed under srun --mpi=pmix: $out"
echo "test_srun: srun -O -N 1 -n 4 --mpi=pmix test_bootstrap --pmix: 4 of 4 ranks passed"

#!/usr/bin/env bash
# An injected bad rkey on the IBGDA path (emulated NIC) is reported, not a hang: the put waiting on
# the failed WQE prints the decoded error CQE (syndrome, opcode, peer) and traps, and the NIC's host
# thread logs which check failed. Usage: test_ibgda_inject.sh GSHMEMRUN TEST_IBGDA
set -u
run=$1 exe=$2
export GSHMEM_REMOTE_TRANSPORT=ibgda GSHMEM_IBGDA_NIC=emulated GSHMEM_DISABLE_P2P=1 GSHMEM_IBGDA_INJECT_BAD_RKEY=40
export GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-256M}
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "${n:-0}" -ge 1 ] || { echo "no GPU: skipped"; exit 77; }
out=$(timeout 120 "$run" -n 2 --timeout 100 "$exe" --inject 2>&1); rc=$?
echo "$out"
[ $rc = 124 ] && { echo "FAIL: timed out (a hang, not a report)"; exit 1; }
[ $rc = 0 ] && { echo "FAIL: the injected error went unnoticed"; exit 1; }
for want in "IBGDA work request to PE" "remote access error" "opcode RDMA_WRITE" "bad rkey injected"; do
    grep -q "$want" <<<"$out" || { echo "FAIL: no '$want' in the output"; exit 1; }
done
echo "test_ibgda_inject: the injected bad rkey was reported"

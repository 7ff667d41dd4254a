#!/usr/bin/env bash
# GSHMEM_REMOTE_TRANSPORT=ibgda with GSHMEM_IBGDA_NIC=hw on a host without a ConnectX: shmem_init
# fails promptly on every PE, naming why this PE cannot use IBGDA (the probe's error) and the peer
# left without a route; no hang. Skipped where a ConnectX opens with DEVX (then the probe passes).
# Usage: test_ibgda_hw_nodev.sh GSHMEMRUN TEST_EXE
set -u
run=$1 exe=$2
export GSHMEM_REMOTE_TRANSPORT=ibgda GSHMEM_IBGDA_NIC=hw GSHMEM_DISABLE_P2P=1
export GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-256M}
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "${n:-0}" -ge 1 ] || { echo "no GPU: skipped"; exit 77; }
out=$(GSHMEM_DEBUG=info timeout 120 "$run" -n 2 --timeout 100 "$exe" 2>&1); rc=$?
echo "$out"
if grep -q "opens with DEVX" <<<"$out"; then echo "a ConnectX opens here: skipped"; exit 77; fi
[ $rc = 124 ] && { echo "FAIL: timed out (a hang, not a report)"; exit 1; }
[ $rc = 0 ] && { echo "FAIL: shmem_init succeeded without a ConnectX"; exit 1; }
for want in "GSHMEM_REMOTE_TRANSPORT=ibgda with GSHMEM_IBGDA_NIC=hw, but this PE cannot use IBGDA: " \
            "no transport reaches PE" "this PE cannot use IBGDA"; do
    grep -qF "$want" <<<"$out" || { echo "FAIL: no '$want' in the output"; exit 1; }
done
# the probe's cause is named: one of the ways a host lacks a ConnectX
grep -qE "no RDMA device on this host|is not an mlx5|mlx5dv_open_device with DEVX failed|is missing \(|no usable mlx5 device" <<<"$out" ||
    { echo "FAIL: the cause is not named"; exit 1; }
echo "test_ibgda_hw_nodev: forced IBGDA on hardware without a ConnectX fails init, naming why"

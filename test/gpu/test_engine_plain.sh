#!/usr/bin/env bash
# The order reversal test_engine runs through the engine, as plain on-stream collectives: even PEs
# enqueue an allreduce on the world then one on a copy of the world, odd PEs the other way round.
# It must deadlock; the device wait timeout (GSHMEM_DEVICE_WAIT_TIMEOUT, 5 s here) ends it with a
# report and a trap, so the run fails and each PE says why. Passes when that happened.
# test_engine_plain.sh GSHMEMRUN TEST_ENGINE [NPES]. Run it alone: the trapped contexts end the job
# (under MPS, a fault of one client may take its server down: RUN_SUITE-style daemons are not used).
set -u
run=$1 exe=$2 n=${3:-2}
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU' || { echo "no GPU: skipped"; exit 77; }
out=$(GSHMEM_DEVICE_WAIT_TIMEOUT=${GSHMEM_DEVICE_WAIT_TIMEOUT:-5} GSHMEM_TEST_ENGINE_PLAIN=1 GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-1G} \
      timeout 300 "$run" -n "$n" --timeout 240 "$exe" 2>&1); rc=$?
echo "$out" | grep -E "PE [0-9]+:|gshmem: PE" | head -20
if [ $rc = 0 ] || grep -q "NO deadlock" <<<"$out"; then
    echo "FAIL: plain collectives in reversed order did not deadlock (rc $rc)"; exit 1
fi
if ! grep -q "deadlock, ended by the device wait timeout" <<<"$out" && ! grep -q "waited more than" <<<"$out"; then
    echo "$out" | tail -20
    echo "FAIL: the run failed (rc $rc) without the device wait timeout's report"; exit 1
fi
echo "test_engine_plain: plain collectives in reversed order deadlocked and the device wait timeout reported it (rc $rc)"

#!/usr/bin/env bash
# Runs every GPU functional test with N PEs: run-suite.sh BUILD_DIR N [test ...]
# The environment reaches every PE: GSHMEM_REMOTE_TRANSPORT=proxy GSHMEM_DISABLE_P2P=1 runs the
# suite with every peer remote; GSHMEM_TEST_HOSTS=K makes hosts of K PEs (GSHMEM_HOST_ID).
# RUN_SUITE_TIMEOUT: seconds each test may run (default 580). RUN_SUITE_MPS=0: no MPS daemon.
# CUDA_VISIBLE_DEVICES limits the GPUs the PEs share.
# With more PEs than GPUs, PEs share GPUs; an MPS daemon is started for the run (without it the
# kernels of PEs on one GPU are time-sliced and a spinning PE can starve its peer), and each PE
# gets its share of the SMs. The GPU's compute mode is never changed.
set -uo pipefail
build=$1 npes=$2
shift 2
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(rma typed amo signal heap barrier modules coll engine init_loop wide_blocks)
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-2G}

ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
# CUDA_VISIBLE_DEVICES=0 (say) runs the PEs on the GPUs it names: PEs then share them under MPS
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && [ "${ngpus:-0}" -gt 0 ]; then
    ngpus=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
fi
if [ "${ngpus:-0}" -lt 1 ]; then echo "run-suite: no GPU" >&2; exit 77; fi
mps=0
# RUN_SUITE_MPS=0: no MPS even where PEs share a GPU (their kernels are then time-sliced: slow)
if [ "$npes" -gt "$ngpus" ] && [ "${RUN_SUITE_MPS:-1}" != 0 ]; then
    mps=1
    per_gpu=$(( (npes + ngpus - 1) / ngpus ))
    export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$(( 100 / per_gpu ))
fi
# A daemon of its own for every test: a PE killed by a timeout leaves the MPS server in a state
# where the next clients fail ("unspecified launch failure"), which would blame the later tests.
mps_start() {
    [ $mps = 1 ] || return 0
    export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
    nvidia-cuda-mps-control -d || { echo "run-suite: cannot start MPS" >&2; exit 1; }
    mps_up=1
}
mps_up=0
mps_stop() {
    [ $mps_up = 1 ] || return 0
    mps_up=0
    echo quit | nvidia-cuda-mps-control
    # the daemon quits once its server has; the next test's daemon must not meet this one's
    for _ in $(seq 50); do pgrep -f "nvidia-cuda-mps-(control|server)" >/dev/null || break; sleep 0.1; done
}
trap mps_stop EXIT

# GSHMEM_TEST_HOSTS=K: the PEs act as hosts of K PEs each (as-hosts.sh sets GSHMEM_HOST_ID)
wrap=()
[ -n "${GSHMEM_TEST_HOSTS:-}" ] && wrap=("$(dirname "$0")/as-hosts.sh" "$GSHMEM_TEST_HOSTS")

tmo=${RUN_SUITE_TIMEOUT:-580} # seconds per test
fail=0 pass=0
for t in "${tests[@]}"; do
    mps_start
    start=$(date +%s%N)
    if timeout $((tmo + 20)) "$build/runtime/tools/gshmemrun" -n "$npes" --timeout "$tmo" "${wrap[@]}" "$build/test/test_$t"; then
        pass=$((pass + 1)); st=PASS
    else
        fail=$((fail + 1)); st=FAIL
    fi
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    mps_stop
    printf 'run-suite: %s %s with %d PEs on %d GPUs%s (%d ms)\n' "$st" "$t" "$npes" "$ngpus" \
        "$([ $mps = 1 ] && echo ", MPS")" "$ms"
done
echo "run-suite: $pass passed, $fail failed ($npes PEs)"
[ $fail -eq 0 ]

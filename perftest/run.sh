#!/usr/bin/env bash
# Installs what is missing, builds gshmem in ./build and runs the bundled perftests on this
# host's GPUs with 2 PEs (one per GPU where there are two or more). Where the 2 PEs share one
# GPU, they run under a private MPS daemon (gshmemrun --mps: half the SMs each, stopped after
# each perftest, the compute mode untouched); time-sliced, every latency would read as one
# scheduling slice (milliseconds). Extra arguments go to every perftest (e.g. --json). Exits
# non-zero, saying so, on a host without a GPU. GSHMEM_SKIP_BUILD=1 runs the build already in
# $GSHMEM_BUILD_DIR (say, one made on another machine) as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/install-deps.sh --perftests

ngpus=0
if command -v nvidia-smi >/dev/null 2>&1; then ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
if [ "$ngpus" -lt 1 ]; then
    echo "perftest: no NVIDIA GPU on this host (nvidia-smi finds none); the perftests need GPUs" >&2
    exit 1
fi

build=${GSHMEM_BUILD_DIR:-build}
if [ "${GSHMEM_SKIP_BUILD:-0}" != 1 ]; then
    source test/build.sh
    gshmem_build "$build" --buildtype=release
fi

export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
run="$build/runtime/tools/gshmemrun -n 2 --timeout 300"
grid_ctas=128
if [ "$ngpus" -lt 2 ]; then
    if command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
        echo "perftest: one GPU: both PEs share it under MPS (a private daemon per perftest, half the SMs each; figures are not NVLink figures)"
        run="$run --mps"
        # an MPS share caps a PE's SMs but reserves none: two cooperative grids of all that fits
        # (66 CTAs of 512 threads each on an H200 at 50%) can wait on each other forever
        grid_ctas=32
    else
        echo "perftest: one GPU and no nvidia-cuda-mps-control (it comes with the NVIDIA driver): both PEs share the GPU" \
             "time-sliced, so latencies read in milliseconds; figures are not NVLink figures" >&2
    fi
fi
pt="$build/perftest"
$run "$pt/put_bw" -b 1K -e 256M -f 4 -c 32 -t 256 "$@"
$run "$pt/get_bw" -b 1K -e 256M -f 4 -c 32 -t 256 "$@"
$run "$pt/p_latency" "$@"
# the collectives' headline shapes: barrier in a kernel and on a stream, float sum allreduce,
# fcollect and alltoall up to 8 MiB a PE, and the grid-scoped allreduce
$run "$pt/barrier" --scope thread "$@"
$run "$pt/barrier_on_stream" "$@"
$run "$pt/reduce_on_stream" -b 8 -e 128M -f 4 "$@"
$run "$pt/fcollect_on_stream" -b 8 -e 8M -f 4 "$@"
$run "$pt/alltoall_on_stream" -b 8 -e 8M -f 4 "$@"
$run "$pt/reduce" --scope grid -c $grid_ctas -t 512 -b 8M -e 128M -f 16 "$@"
# the preemptive collective engine against the on-stream allreduce (8 B .. 128 MiB x16)
$run "$pt/engine_allreduce" "$@"

#!/usr/bin/env bash
# docs/api.md promises that the collective code takes at most 128 registers a thread, so a user's
# cooperative kernel of 512 threads that calls a shmemx_*_grid collective fits an SM (64K
# registers) without __launch_bounds__. ptxas reports each kernel of grid_registers.cu; any above
# 128 fails this test, and so does any kernel that spills (the bound is then too tight for it).
# Usage: test_registers.sh SOURCE_DIR GPU_ARCH
set -euo pipefail
src=$(cd "$1" && pwd) arch=$2 limit=128
kernels=$(grep -c '^GRID_KERNEL(' "$src/test/unit/grid_registers.cu")
out=$("${NVCC:-nvcc}" -arch="sm_$arch" --std=c++17 -O3 -I"$src/include" -I"$src" --resource-usage \
      -c "$src/test/unit/grid_registers.cu" -o /dev/null 2>&1) || { echo "$out" >&2; echo "test_registers: compile failed" >&2; exit 1; }
echo "$out" | awk -v limit=$limit -v kernels="$kernels" '
    /Compiling entry function/ { match($0, /\x27[^\x27]+\x27/); fn = substr($0, RSTART + 1, RLENGTH - 2) }
    /spill stores/ { spill[fn] = $5 }
    /Used [0-9]+ registers/ {
        if (fn ~ /gshmemi_module_anchor/) next # the module anchor every unit that includes gshmem.h has
        for (i = 1; i <= NF; i++) if ($i == "Used") regs = $(i + 1)
        n++
        printf "%-48s %3d registers, %s bytes spilled\n", fn, regs, spill[fn]
        if (regs > limit) { printf "test_registers: %s uses %d registers, more than %d\n", fn, regs, limit; bad++ }
        if (spill[fn] + 0 > 0) { printf "test_registers: %s spills %s bytes\n", fn, spill[fn]; bad++ }
    }
    END {
        if (n != kernels) { printf "test_registers: ptxas reported %d kernels, grid_registers.cu has %d\n", n, kernels; exit 1 }
        exit bad > 0
    }'

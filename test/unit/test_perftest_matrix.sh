#!/usr/bin/env bash
# The device collective perftests built with -Dperftest_device_types=all (every type and op) take
# some 20 CPU-minutes of ptxas, too long for every CI run. This test takes perftest_matrix.cu,
# which instantiates all of them, through nvcc's front end only, so a change that breaks that
# build fails here. Usage: test_perftest_matrix.sh SOURCE_DIR GPU_ARCH
set -euo pipefail
src=$(cd "$1" && pwd) arch=$2
exec "${NVCC:-nvcc}" -arch="sm_$arch" --std=c++17 -I"$src/include" -I"$src" -Xcompiler=-Wall,-Wextra -fdevice-syntax-only \
     -c "$src/test/unit/perftest_matrix.cu" -o /dev/null

#!/usr/bin/env bash
# Installs what is missing, builds gshmem in ./build and runs the whole test suite: unit (CPU),
# mpi (PMIx under mpirun, where Open MPI is installed) and gpu (skipped, exit 77, without a GPU).
# Ends with one line "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
source test/install-deps.sh --tests

build=${GSHMEM_BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=release
ninja -C "$build"

# Open MPI refuses root without these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVLink multicast is never used by gshmem; keep the other libraries off it too.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1

rc=0
meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || rc=$?

# meson's summary as one plain line.
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
res = [json.loads(l)["result"] for l in open(sys.argv[1]) if l.strip()]
ok = sum(r in ("OK", "EXPECTEDFAIL") for r in res)
skip = sum(r == "SKIP" for r in res)
print(f"{ok} passed, {len(res) - ok - skip} failed, {skip} skipped")
PY
exit $rc

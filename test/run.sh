#!/usr/bin/env bash
# Installs what is missing, builds gshmem in ./build and runs the whole test suite: unit (CPU),
# mpi (PMIx under mpirun, where Open MPI is installed) and gpu (skipped, exit 77, without a GPU).
# Ends with one line "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
source test/install-deps.sh --tests

build=${GSHMEM_BUILD_DIR:-build}
source test/build.sh
# The device collective perftests in float sum only: every test here runs as well against them,
# and the full type matrix (some 30 CPU-minutes of nvcc) would take CI past its time limit;
# perftest/run.sh into a build of its own, or -Dperftest_device_types=all, builds them all.
gshmem_build "$build" --buildtype=release -Dperftest_device_types=float

# Open MPI refuses root without these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVLink multicast is never used by gshmem; keep the other libraries off it too.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1

rc=0
meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || rc=$?
logs=("$build/meson-logs/testlog.json")

# The host-only tests again under AddressSanitizer and UndefinedBehaviorSanitizer: the allocator,
# the env table and gshmem-info, the collective rules, the unique-id bootstrap (messages from the
# network), the launcher and the PMIx bootstrap (a dead rank's naming too). They take no CUDA code, so this build is seconds.
if [ $# = 0 ]; then
    san="$build-sanitize"
    echo "== the host-only tests under AddressSanitizer and UndefinedBehaviorSanitizer ($san)"
    [ -f "$san/build.ninja" ] || meson setup "$san" --buildtype=debug -Db_sanitize=address,undefined -Dperftests=false
    # those of the host-only tests this build defines (cmocka's and PMIx's are optional), and the
    # targets they depend on, from meson's introspection
    mapfile -t plan < <(meson introspect "$san" --tests --targets | python3 -c '
import json, os, sys
info = json.load(sys.stdin)
want = "route proxy_join alloc env gshmem_info coll_rules cmp engine proxy_fifo proxy_verbs proxy_hostreq mlx5_wqe ibgda_emul ibgda_ring ibgda_prm ibgda_setup bootstrap_uid launcher bootstrap_addr bootstrap_pmix pmix_dead_rank".split()
files = {t["id"]: t["filename"] for t in info["targets"]}
tests = [t for t in info["tests"] if t["name"] in want]
print(" ".join(t["name"] for t in tests))
print(" ".join(sorted({os.path.relpath(f, sys.argv[1]) for t in tests for d in t["depends"] for f in files[d]})))
' "$(cd "$san" && pwd)")
    read -ra host_tests <<<"${plan[0]}"
    read -ra targets <<<"${plan[1]}"
    ninja -C "$san" "${targets[@]}"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 LSAN_OPTIONS="suppressions=$PWD/test/lsan.supp" \
        meson test -C "$san" --no-rebuild --print-errorlogs --num-processes 2 "${host_tests[@]}" || rc=$?
    logs+=("$san/meson-logs/testlog.json")
fi

# meson's summary as one plain line.
python3 - "${logs[@]}" <<'PY'
import json, sys
res = [json.loads(l)["result"] for f in sys.argv[1:] for l in open(f) if l.strip()]
ok = sum(r in ("OK", "EXPECTEDFAIL") for r in res)
skip = sum(r == "SKIP" for r in res)
print(f"{ok} passed, {len(res) - ok - skip} failed, {skip} skipped")
PY
exit $rc

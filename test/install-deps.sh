#!/usr/bin/env bash
# Installs what building and testing gshmem needs and is missing, on Debian/Ubuntu.
# Idempotent: installs nothing when everything is there (the GPU image has no package mirror).
# CUDA itself (nvcc >= 12) cannot come from Debian's archive: it must already be installed.
set -euo pipefail

# The GPU image keeps meson and ninja in a Python venv.
for d in /opt/torch/.venv/bin /usr/local/cuda/bin; do
    [ -d "$d" ] && case ":$PATH:" in *":$d:"*) ;; *) PATH="$PATH:$d" ;; esac
done
export PATH

# Usage: install-deps.sh --tests or --perftests. Without --tests, what only the test suite needs (cmocka,
# PMIx, Open MPI, matplotlib for perftest/plot.py, clang for the fuzz tests) is installed where apt can, and skipped with a warning where it cannot.
want_tests=0
[ "${1:-}" = "--tests" ] && want_tests=1

missing=() optional=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
want_pc() { pkg-config --exists "$1" 2>/dev/null || optional+=("$2"); }
want_cmd() { command -v "$1" >/dev/null 2>&1 || optional+=("$2"); }
want_py() { python3 -c "import $1" >/dev/null 2>&1 || /usr/bin/python3 -c "import $1" >/dev/null 2>&1 || optional+=("$2"); }

need_cmd cc gcc
need_cmd pkg-config pkg-config
need_cmd meson meson
need_cmd ninja ninja-build
need_cmd python3 python3
# the verbs backend's headers (libibverbs itself is loaded at run time, only where present), and
# mlx5dv.h, which test_mlx5_wqe checks device/mlx5_wqe.h against (same package)
[ -f /usr/include/infiniband/verbs.h ] && [ -f /usr/include/infiniband/mlx5dv.h ] || missing+=(libibverbs-dev)
want_pc cmocka libcmocka-dev
want_pc pmix libpmix-dev
want_cmd mpirun openmpi-bin
# a one-node Slurm cluster for the srun test (mpi_pmix_v4 is in slurm-wlm-basic-plugins)
want_cmd slurmctld slurmctld
want_cmd slurmd slurmd
[ -n "$(ls /usr/lib/*/slurm-wlm/mpi_pmix*.so 2>/dev/null)" ] || optional+=(slurm-wlm-basic-plugins)
want_py matplotlib python3-matplotlib  # perftest/plot.py and its test
want_cmd clang clang # the libFuzzer targets in test/fuzz

apt_install() {
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    command -v apt-get >/dev/null 2>&1 || return 1
    echo "install-deps: installing $*"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if [ ${#missing[@]} -gt 0 ] || { [ ${#optional[@]} -gt 0 ] && [ $want_tests = 1 ]; }; then
    if ! apt_install "${missing[@]}" "${optional[@]}"; then
        echo "install-deps: could not install ${missing[*]} ${optional[*]}; install them by hand" >&2
        exit 1
    fi
elif [ ${#optional[@]} -gt 0 ]; then
    echo "install-deps: not installing ${optional[*]} (only the test suite needs them)" >&2
fi

# libFuzzer's runtime is in libclang-rt-N-dev on Debian 12 and newer, which clang only recommends.
if [ $want_tests = 1 ] && command -v clang >/dev/null 2>&1 &&
    ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
        clang -x c - -fsanitize=fuzzer -o /dev/null >/dev/null 2>&1; then
    clang_major=$(clang -dumpversion | cut -d. -f1)
    apt_install "libclang-rt-$clang_major-dev" ||
        echo "install-deps: clang cannot link libFuzzer and libclang-rt-$clang_major-dev did not install; the fuzz tests will be skipped" >&2
fi

if ! command -v nvcc >/dev/null 2>&1; then
    echo "install-deps: nvcc not found (looked on PATH and in /usr/local/cuda/bin); install the CUDA toolkit 12.0 or newer" >&2
    exit 1
fi

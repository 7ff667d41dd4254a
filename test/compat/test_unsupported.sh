#!/usr/bin/env bash
# An NVSHMEM name gshmem does not support fails at compile time, with a message naming it, in
# device code and in host code, with and without -rdc=true (and, for constants, in C too). A
# control program of the same shape with a supported name compiles, so a failure here is the
# name's and not the setup's.
# Usage: test_unsupported.sh SOURCE_DIR GPU_ARCH
set -euo pipefail
src=$(cd "$1" && pwd) arch=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc=${NVCC:-nvcc}
flags=(-arch="sm_$arch" --std=c++17 -I"$src/include/nvshmem-compat" -I"$src/include" -I"$src")
fail() { echo "test_unsupported: FAILED: $*" >&2; exit 1; }

# case NAME WHERE(device|host) STATEMENT
cases=(
    "nvshmemx_mc_ptr|device|void *q = nvshmemx_mc_ptr(NVSHMEM_TEAM_WORLD, p); *(void **)p = q;"
    "nvshmemx_float_atomic_add|device|nvshmemx_float_atomic_add((float *)p, 1.0f, 0);"
    "NVSHMEMX_TEAM_SAME_GPU|device|*p = nvshmem_team_n_pes(NVSHMEMX_TEAM_SAME_GPU);"
    "nvshmemx_buffer_register|host|nvshmemx_buffer_register(p, 4);"
    "nvshmemx_cumodule_init|host|nvshmemx_cumodule_init(nullptr);"
    "NVSHMEMX_TEAM_GPU_LEADERS|host|*p = nvshmem_team_n_pes(NVSHMEMX_TEAM_GPU_LEADERS);"
    "NVSHMEMX_INIT_WITH_MPI_COMM|host|nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, nullptr);"
    "nvshmemx_int_wait_until_all_on_stream|host|nvshmemx_int_wait_until_all_on_stream(p, 1, nullptr, NVSHMEM_CMP_EQ, 1, 0);"
)
program() { # WHERE STATEMENT
    if [ "$1" = device ]; then
        printf '#include <nvshmem.h>\n#include <nvshmemx.h>\n__global__ void k(int *p) { %s }\nint main() { return 0; }\n' "$2"
    else
        printf '#include <nvshmem.h>\n#include <nvshmemx.h>\nint main() { int x = 0, *p = &x; %s return x; }\n' "$2"
    fi
}

for rdc in "" "-rdc=true"; do
    for where in device host; do
        program "$where" "nvshmem_int_p(p, 1, 0);" >"$tmp/control.cu"
        # shellcheck disable=SC2086 # rdc is empty or one flag
        "$nvcc" "${flags[@]}" $rdc -c "$tmp/control.cu" -o "$tmp/control.o" >"$tmp/control.log" 2>&1 ||
            { cat "$tmp/control.log" >&2; fail "the $where control program ${rdc:+($rdc) }does not compile"; }
    done
    for c in "${cases[@]}"; do
        IFS='|' read -r name where stmt <<<"$c"
        program "$where" "$stmt" >"$tmp/case.cu"
        # shellcheck disable=SC2086
        if "$nvcc" "${flags[@]}" $rdc -c "$tmp/case.cu" -o "$tmp/case.o" >"$tmp/case.log" 2>&1; then
            fail "$name in $where code ${rdc:+($rdc) }compiled"
        fi
        grep -q "$name is not supported by gshmem" "$tmp/case.log" ||
            grep -q "$name without <mpi.h> included first is not supported by gshmem" "$tmp/case.log" ||
            { cat "$tmp/case.log" >&2; fail "$name in $where code ${rdc:+($rdc) }failed without naming it"; }
        echo "ok: $name in $where code ${rdc:+($rdc) }fails to compile, naming it"
    done
done

# C host code: the constants fail the same way (a C program has no function templates: an
# unsupported function is an undeclared one, which the compiler names)
printf '#include <nvshmem.h>\nint main(void) { return nvshmem_team_n_pes(NVSHMEMX_TEAM_SAME_GPU); }\n' >"$tmp/case.c"
if gcc -std=c11 -I"$src/include/nvshmem-compat" -I"$src/include" -I"$src" -c "$tmp/case.c" -o "$tmp/case_c.o" >"$tmp/case_c.log" 2>&1; then
    fail "NVSHMEMX_TEAM_SAME_GPU in C compiled"
fi
grep -q "NVSHMEMX_TEAM_SAME_GPU is not supported by gshmem" "$tmp/case_c.log" ||
    { cat "$tmp/case_c.log" >&2; fail "NVSHMEMX_TEAM_SAME_GPU in C failed without naming it"; }
echo "ok: NVSHMEMX_TEAM_SAME_GPU in C fails to compile, naming it"
echo "test_unsupported: every unsupported name fails at compile time with its name"

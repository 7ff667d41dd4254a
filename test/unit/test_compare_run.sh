#!/usr/bin/env bash
# perftest/compare/run.sh before any build: bad arguments are refused by name (exit 2), and a host
# without a GPU is told so (exit 1) instead of building for nothing. Usage: test_compare_run.sh SOURCE_ROOT
set -uo pipefail
src=${1:?usage: test_compare_run.sh SOURCE_ROOT}
run=$src/perftest/compare/run.sh
fail=0
expect() { # expect NAME STATUS PATTERN -- ARGS...
    local name=$1 want=$2 pat=$3 out rc
    shift 4
    out=$(timeout 60 "$run" "$@" 2>&1)
    rc=$?
    if [ $rc -eq "$want" ] && grep -q -- "$pat" <<< "$out"; then echo "ok: $name"; else
        echo "FAIL: $name (exit $rc, wanted $want and '$pat'):"; echo "$out"; fail=1; fi
}
expect "-n 1 is refused" 2 "-n 1: the benchmarks need 2 or more PEs" -- -n 1
expect "-n x is refused" 2 "-n 'x' is not a number" -- -n x
expect "an unknown argument is named" 2 "unknown argument '--frobnicate'" -- --frobnicate
expect "an unknown --bench name is refused before any build" 2 "unknown benchmark 'nope'" -- --bench p_lat,nope
expect "--help says what it builds" 0 "Builds perftest/compare/nvshmem_bench.cu twice" -- --help
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "skip: this host has a GPU (the no-GPU message is not checked)"
else
    expect "no GPU: says so and fails" 1 "no NVIDIA GPU on this host" -- -n 2 --quick
fi
[ $fail = 0 ] && echo "test_compare_run: all passed"
exit $fail

#!/usr/bin/env bash
# The collective perftests refuse options they cannot run with, naming the option, before they
# touch a GPU (so this runs anywhere): exit 2 and the reason on stderr.
# Usage: test_perftest_options.sh PERFTEST_DIR
set -uo pipefail
dir=$1 fail=0
expect() { # expect TEXT PERFTEST ARGS...
    local want=$1 out rc
    shift
    out=$("$dir/$1" "${@:2}" 2>&1 >/dev/null)
    rc=$?
    if [ $rc -ne 2 ] || [[ "$out" != *"$want"* ]]; then
        echo "FAILED: $* exited $rc saying \"$out\"; wanted 2 and \"$want\""
        fail=1
    fi
}
expect '--op xor: the bitwise reductions are on integers' reduce_on_stream --op xor --type float
expect '--op and: the bitwise reductions are on integers' reduce --op and
expect '--op mean: not one of sum, max, min, prod, and, or, xor' reducescatter_on_stream --op mean
expect '--type quad: not one of float, double, int, half, bfloat16' fcollect --type quad
expect '--scope grid: only the device data collectives' barrier --scope grid
expect 'bad options' alltoall_on_stream --scope grid
expect '-t 1024: the device reduce perftest runs 1 to 512 threads' reduce -t 1024
expect '-t 1024: the device fcollect perftest runs 1 to 512 threads' fcollect --scope grid -t 1024
expect 'bad options' bcast_on_stream --scope block
expect 'bad options' barrier --type int
exit $fail

#!/usr/bin/env bash
# The collective perftests and post_rate refuse options they cannot run with, naming the option, before they
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
expect '--op p: thread scope only' post_rate --op p --scope warp
expect '--op p: size 16: 4 (shmem_int_p) or 8 (shmem_long_p) only' post_rate --op p -b 4 -e 16
expect '--op get: not one of put, p' post_rate --op get
expect '-t 48: warp scope needs a multiple of 32 threads' post_rate --scope warp -t 48
expect '--bidir: only PE 0 posts' post_rate --bidir
expect 'bad options' post_rate --ops-per-unit 0
expect 'bad options' reduce --ops-per-unit 4
exit $fail

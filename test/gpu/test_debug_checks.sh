#!/usr/bin/env bash
# Runs test_debug_checks in every mode with GSHMEM_DEBUG_CHECKS=1 and checks the reports.
set -u
exe=$1
export GSHMEM_DEBUG_CHECKS=1 GSHMEM_SYMMETRIC_SIZE=256M
out=$("$exe" ok 2>&1); rc=$?
[ $rc = 77 ] && { echo "$out"; exit 77; }
[ $rc = 0 ] || { echo "$out"; echo "FAIL: valid calls"; exit 1; }
check() { # mode, expected text
    local o; o=$("$exe" "$1" 2>&1)
    if ! grep -q "trapped" <<<"$o" || ! grep -q "$2" <<<"$o" || ! grep -q "heap \[0x" <<<"$o"; then
        echo "$o"; echo "FAIL: $1: expected a report with '$2' and a trap"; exit 1
    fi
    grep "gshmem: PE" <<<"$o"
}
check bad-pe "shmem_int_p: PE out of range: pe 1 (of 1)"
check bad-addr "shmem_int_p: address range outside the symmetric heap"
check bad-range "shmem_putmem: address range outside the symmetric heap"
echo "test_debug_checks: 4 modes passed"

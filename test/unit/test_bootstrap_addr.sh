#!/usr/bin/env bash
# Where rank 0 of a unique-id job listens: 127.0.0.1 under gshmemrun (every PE is local), the
# interface or address GSHMEM_BOOTSTRAP_IFNAME / GSHMEM_BOOTSTRAP_ADDR name, and a clear error
# naming the variable for a bad one. Usage: test_bootstrap_addr.sh GSHMEMRUN TEST_BOOTSTRAP
set -u

RUN=${1:?usage: test_bootstrap_addr.sh GSHMEMRUN TEST_BOOTSTRAP}
TB=${2:?usage: test_bootstrap_addr.sh GSHMEMRUN TEST_BOOTSTRAP}
LIMIT=60
source "$(dirname "$0")/harness.sh"
unset GSHMEM_BOOTSTRAP_IFNAME GSHMEM_BOOTSTRAP_ADDR

# 1. gshmemrun: every PE sees 127.0.0.1, and gshmemrun logs the choice at info.
GSHMEM_DEBUG=info timeout $LIMIT "$RUN" -n 3 "$TB" --env >"$tmp/out" 2>"$tmp/err"
rc=$?
n=$(grep -c 'rank 0 listens on 127.0.0.1$' "$tmp/out")
if [ $rc -eq 0 ] && [ "$n" -eq 3 ] && grep -q 'rank 0 listens on 127.0.0.1:[0-9]* (every PE runs on this host)' "$tmp/err"; then
    pass "gshmemrun: rank 0 listens on 127.0.0.1"
else fail "gshmemrun: rc $rc, $n of 3 PEs saw 127.0.0.1"; cat "$tmp/out" "$tmp/err"; fi

# 2. Even with an interface named, gshmemrun stays on loopback.
GSHMEM_BOOTSTRAP_ADDR=127.0.0.2 timeout $LIMIT "$RUN" -n 2 "$TB" --env >"$tmp/out" 2>"$tmp/err"
rc=$?
n=$(grep -c 'rank 0 listens on 127.0.0.1$' "$tmp/out")
if [ $rc -eq 0 ] && [ "$n" -eq 2 ]; then pass "gshmemrun with GSHMEM_BOOTSTRAP_ADDR set: still 127.0.0.1"
else fail "gshmemrun with GSHMEM_BOOTSTRAP_ADDR: rc $rc, $n of 2 PEs saw 127.0.0.1"; cat "$tmp/out" "$tmp/err"; fi

# 3. A unique id made outside gshmemrun (shmemx_get_uniqueid's path).
addr() { # expected-address, env assignments...
    local want=$1; shift
    env "$@" GSHMEM_DEBUG=info timeout $LIMIT "$TB" --uid-addr >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc -eq 0 ] && grep -q "rank 0 listens on $want\$" "$tmp/out" && grep -q "listens on $want:[0-9]* (" "$tmp/err"; then pass "$* -> $want"
    else fail "$*: rc $rc, expected $want"; cat "$tmp/out" "$tmp/err"; fi
}
addr 127.0.0.1 GSHMEM_BOOTSTRAP_IFNAME=lo
addr 127.0.0.2 GSHMEM_BOOTSTRAP_ADDR=127.0.0.2
addr 127.0.0.1 GSHMEM_BOOTSTRAP_ADDR=127.0.0.1

bad() { # text the error must hold, env assignments...
    local want=$1; shift
    env "$@" timeout $LIMIT "$TB" --uid-addr >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$want" "$tmp/err"; then pass "$*: '$want'"
    else fail "$*: rc $rc, expected an error with '$want'"; cat "$tmp/out" "$tmp/err"; fi
}
bad 'GSHMEM_BOOTSTRAP_IFNAME="nosuchif0" is not an interface with an IPv4 address on this host (those with one: lo' GSHMEM_BOOTSTRAP_IFNAME=nosuchif0
# the shape is the env table's business: refused when the table is read
bad 'GSHMEM_BOOTSTRAP_ADDR="10.0.0.300" is malformed: accepted empty or a dotted-quad IPv4 address' GSHMEM_BOOTSTRAP_ADDR=10.0.0.300
bad 'GSHMEM_BOOTSTRAP_ADDR="eth0" is malformed: accepted empty or a dotted-quad IPv4 address' GSHMEM_BOOTSTRAP_ADDR=eth0
bad 'GSHMEM_BOOTSTRAP_IFNAME="eth0/1" is malformed: accepted empty or an interface name' GSHMEM_BOOTSTRAP_IFNAME=eth0/1
# TEST-NET-1: an address no interface of this host has
bad 'cannot listen on 192.0.2.1, which GSHMEM_BOOTSTRAP_ADDR names' GSHMEM_BOOTSTRAP_ADDR=192.0.2.1
bad 'are both set; set one of them' GSHMEM_BOOTSTRAP_IFNAME=lo GSHMEM_BOOTSTRAP_ADDR=127.0.0.1
# gshmemrun refuses a bad value too, before starting any PE
timeout $LIMIT env GSHMEM_BOOTSTRAP_IFNAME=nosuchif0 "$RUN" -n 2 true >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'GSHMEM_BOOTSTRAP_IFNAME="nosuchif0"' "$tmp/err"; then pass "gshmemrun refuses a bad GSHMEM_BOOTSTRAP_IFNAME"
else fail "gshmemrun with a bad GSHMEM_BOOTSTRAP_IFNAME: rc $rc"; cat "$tmp/err"; fi
timeout $LIMIT env GSHMEM_BOOTSTRAP_ADDR=nan "$RUN" -n 2 true >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'GSHMEM_BOOTSTRAP_ADDR="nan" is malformed' "$tmp/err"; then pass "gshmemrun refuses a malformed GSHMEM_BOOTSTRAP_ADDR"
else fail "gshmemrun with GSHMEM_BOOTSTRAP_ADDR=nan: rc $rc"; cat "$tmp/err"; fi

if [ $failures -ne 0 ]; then echo "test_bootstrap_addr: $failures check(s) failed"; exit 1; fi
echo "test_bootstrap_addr: all checks passed"

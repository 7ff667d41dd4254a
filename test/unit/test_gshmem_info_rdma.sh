#!/usr/bin/env bash
# gshmem-info --rdma against a fake libibverbs (test/unit/fake_ibverbs.c, one device, port 1 up and
# port 2 down, put first in the library path as libibverbs.so.1): each port listed with its state,
# link layer and MTU, and the dmabuf line.
set -u
info=$1 fake=$2
fail() { echo "test_gshmem_info_rdma: $*" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$fake" "$dir/libibverbs.so.1"
out=$(LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$info" --rdma 2>&1) || fail "exits $? with the fake libibverbs: $out"
for want in '^RDMA devices \(libibverbs' '^  dmabuf registration of GPU memory: ' '^  fake_0 port 1: ACTIVE, InfiniBand, MTU 4096$' \
    '^  fake_0 port 2: DOWN, InfiniBand, MTU 4096$'; do
    grep -Eq "$want" <<<"$out" || fail "no line matching '$want' in: $out"
done
[ "$(grep -c '^  fake_0 port' <<<"$out")" = 2 ] || fail "not exactly the fake's 2 ports: $out"
echo "test_gshmem_info_rdma: the fake device's 2 ports listed with state, link layer and MTU"

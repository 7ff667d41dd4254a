#!/usr/bin/env bash
# gshmem-info: with out-of-range or malformed values it exits non-zero and names each (one line
# each, then a summary naming all); with a clean environment, or good text values, it exits 0 and
# prints every variable's limits, the GPUs (or why there are none) and the RDMA devices; with
# --pes N, the transport of every pair by the runtime's rule, which follows GSHMEM_DISABLE_P2P,
# the host ids and the remote transport's settings (GPU access assumed, so that it holds on a
# host without a GPU); bad arguments are refused naming them.
set -u
info=$1
fail() { echo "test_gshmem_info: $*" >&2; exit 1; }
# start from no GSHMEM_ variable at all
clean=(env)
for v in $(env | sed -n 's/^\(GSHMEM_[A-Z0-9_]*\)=.*/\1/p'); do clean+=(-u "$v"); done

out=$("${clean[@]}" "$info" 2>"${TMPDIR:-/tmp}/gshmem_info.$$") || fail "exits $? with a clean environment"
err=$(cat "${TMPDIR:-/tmp}/gshmem_info.$$"); rm -f "${TMPDIR:-/tmp}/gshmem_info.$$"
[ -z "$err" ] || fail "writes to stderr with a clean environment: $err"
grep -q '^GSHMEM_MAX_TEAMS .*accepts 4\.\.64' <<<"$out" || fail "does not print GSHMEM_MAX_TEAMS's range: $out"
# the remote transport's default says what it takes: the proxy, IBGDA only when asked for
grep -q '^GSHMEM_REMOTE_TRANSPORT .*auto (the host proxy: copy engine within a machine, verbs between machines; IBGDA only when asked for' <<<"$out" ||
    fail "does not say that GSHMEM_REMOTE_TRANSPORT=auto takes the proxy: $(grep REMOTE_TRANSPORT <<<"$out")"

# numbers out of their range, and text rows of the wrong shape
bad=(GSHMEM_MAX_TEAMS=65 GSHMEM_BARRIER_RADIX=33 GSHMEM_COLL_CTAS=-1 GSHMEM_SYMMETRIC_SIZE=2000T GSHMEM_BOOTSTRAP_TIMEOUT=1e-300
     GSHMEM_DEBUG_CHECKS=2 GSHMEM_COLL_PDL=-1 GSHMEM_HEAP_GROWTH=0 GSHMEM_LAUNCHER_FD=-2
     GSHMEM_IB_DEVICE=x:999 GSHMEM_BOOTSTRAP_ADDR=nan GSHMEM_BOOTSTRAP_IFNAME=eth0/1 GSHMEM_BOOTSTRAP_UID=abcd
     GSHMEM_HOST_ID=two$'\n'lines)
err=$("${clean[@]}" "${bad[@]}" "$info" 2>&1 >/dev/null)
rc=$?
[ $rc -ne 0 ] || fail "exits 0 with ${bad[*]}"
for kv in "${bad[@]}"; do
    value=${kv#*=}
    value=${value//$'\n'/\\x0a} # shown on one line
    case ${kv%%=*} in
    GSHMEM_IB_DEVICE | GSHMEM_BOOTSTRAP_ADDR | GSHMEM_BOOTSTRAP_IFNAME | GSHMEM_BOOTSTRAP_UID | GSHMEM_HOST_ID) what="is malformed: accepted" ;;
    *) what="is out of range: accepted" ;;
    esac
    line="${kv%%=*}=\"$value\" $what"
    [ "$(grep -cF "$line" <<<"$err")" = 1 ] || fail "no single line '$line' in: $err"
done
summary=$(grep -F "${#bad[@]} environment variables with a bad value:" <<<"$err") || fail "no summary in: $err"
for kv in "${bad[@]}"; do grep -qF "${kv%%=*}" <<<"$summary" || fail "the summary does not name ${kv%%=*}: $summary"; done
[ "$(wc -l <<<"$err")" = $((${#bad[@]} + 1)) ] || fail "not one line per bad value and a summary: $err"

# text rows of the right shape pass
good=(GSHMEM_IB_DEVICE=mlx5_0:1 GSHMEM_BOOTSTRAP_ADDR=10.0.0.5 GSHMEM_BOOTSTRAP_IFNAME=eth0 GSHMEM_HOST_ID="rack 3 node 7")
"${clean[@]}" "${good[@]}" "$info" >/dev/null 2>"${TMPDIR:-/tmp}/gshmem_info.$$" || fail "exits $? with ${good[*]}: $(cat "${TMPDIR:-/tmp}/gshmem_info.$$")"
err=$(cat "${TMPDIR:-/tmp}/gshmem_info.$$"); rm -f "${TMPDIR:-/tmp}/gshmem_info.$$"
[ -z "$err" ] || fail "writes to stderr with ${good[*]}: $err"
# what a new machine shows: the GPUs or why there are none, the RDMA devices or why there are none
out=$("${clean[@]}" "$info") || fail "exits $? with a clean environment"
grep -q '^GPUs:$' <<<"$out" || fail "no GPU section: $out"
grep -Eq '^  (none: .*the rest below holds without|GPU 0: )' <<<"$out" || fail "neither a GPU nor why there is none: $out"
grep -q '^RDMA devices' <<<"$out" || fail "no RDMA section: $out"
grep -q '^Transports for' <<<"$out" && fail "a transport table without --pes: $out"

# the transport of each pair; $1: the environment, then gshmem-info's arguments
routes() {
    local envs=$1
    shift
    # shellcheck disable=SC2086
    "${clean[@]}" $envs "$info" "$@" 2>&1 | sed -n 's/^  \(PE [0-9]* -> PE [0-9]*: [a-z0-9-]*\) (.*/\1/p'
}
expect_routes() {
    local got want=$1
    shift
    got=$(routes "$@" | tr '\n' ';')
    [ "$got" = "$want" ] || fail "$*: routes '$got', expected '$want'"
}
expect_routes "PE 0 -> PE 1: p2p;PE 0 -> PE 2: proxy-copy;PE 0 -> PE 3: proxy-copy;PE 1 -> PE 0: p2p;PE 1 -> PE 2: proxy-copy;PE 1 -> PE 3: proxy-copy;PE 2 -> PE 0: proxy-copy;PE 2 -> PE 1: proxy-copy;PE 2 -> PE 3: p2p;PE 3 -> PE 0: proxy-copy;PE 3 -> PE 1: proxy-copy;PE 3 -> PE 2: p2p;" \
    "" --pes 4 --hosts a,a,b,b --assume-peer-access
expect_routes "PE 0 -> PE 1: p2p;PE 1 -> PE 0: p2p;" "GSHMEM_HOST_ID=rack7" --pes 2 --assume-peer-access
expect_routes "PE 0 -> PE 1: proxy-copy;PE 1 -> PE 0: proxy-copy;" "GSHMEM_DISABLE_P2P=1" --pes 2 --assume-peer-access
expect_routes "PE 0 -> PE 1: none;PE 1 -> PE 0: none;" "GSHMEM_REMOTE_TRANSPORT=none" --pes 2 --hosts x,y --assume-peer-access
expect_routes "PE 0 -> PE 1: proxy-verbs;PE 1 -> PE 0: proxy-verbs;" "GSHMEM_PROXY_BACKEND=verbs" --pes 2 --hosts x,y --assume-peer-access
expect_routes "PE 0 -> PE 1: ibgda;PE 1 -> PE 0: ibgda;" "GSHMEM_DISABLE_P2P=1 GSHMEM_REMOTE_TRANSPORT=ibgda GSHMEM_IBGDA_NIC=emulated" \
    --pes 2 --assume-peer-access
n=$(routes "" --pes 5 --assume-peer-access | wc -l)
[ "$n" = 20 ] || fail "--pes 5: $n pairs listed, expected 20"
"${clean[@]}" "$info" --pes 3 --assume-peer-access | grep -q '^  PE 0 -> PE 1: p2p (P2P)$' || fail "the reason is not printed beside the route"

# bad arguments: exit 2, naming the argument
bad_arg() {
    local want=$1 err code
    shift
    err=$("${clean[@]}" "$info" "$@" 2>&1 >/dev/null)
    code=$?
    [ $code = 2 ] || fail "$*: exits $code, expected 2"
    grep -qF -- "$want" <<<"$err" || fail "$*: no '$want' in: $err"
}
bad_arg '--pes "0": give a number of PEs from 1 to' --pes 0
bad_arg '--pes "two"' --pes two
bad_arg '--hosts "a,b": give 3 host ids' --pes 3 --hosts a,b
bad_arg '--hosts "a,,b": give 3 host ids' --pes 3 --hosts a,,b
bad_arg '--hosts and --assume-peer-access go with --pes N' --hosts a,b
bad_arg 'unknown or incomplete argument "--frobnicate"' --frobnicate
bad_arg 'unknown or incomplete argument "--pes"' --pes

echo "gshmem-info: exit $rc naming all ${#bad[@]} bad values; exit 0 with good text values and with a clean environment;"\
     "the GPU and RDMA sections; the transport of each pair by host ids and settings; bad arguments refused"

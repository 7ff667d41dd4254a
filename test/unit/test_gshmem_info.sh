#!/usr/bin/env bash
# gshmem-info: with out-of-range or malformed values it exits non-zero and names each (one line
# each, then a summary naming all); with a clean environment, or good text values, it exits 0 and
# prints every variable's limits.
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
echo "gshmem-info: exit $rc naming all ${#bad[@]} bad values; exit 0 with good text values and with a clean environment"

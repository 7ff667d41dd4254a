#!/usr/bin/env bash
# gshmem-info: with out-of-range values it exits non-zero and names each (one line each, then a
# summary naming all); with a clean environment it exits 0 and prints every variable's limits.
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

bad=(GSHMEM_MAX_TEAMS=65 GSHMEM_BARRIER_RADIX=33 GSHMEM_COLL_CTAS=-1 GSHMEM_SYMMETRIC_SIZE=0 GSHMEM_BOOTSTRAP_TIMEOUT=1e-300
     GSHMEM_DEBUG_CHECKS=2 GSHMEM_COLL_PDL=-1 GSHMEM_HEAP_GROWTH=0)
err=$("${clean[@]}" "${bad[@]}" "$info" 2>&1 >/dev/null)
rc=$?
[ $rc -ne 0 ] || fail "exits 0 with ${bad[*]}"
for kv in "${bad[@]}"; do
    line="${kv%%=*}=\"${kv#*=}\" is out of range: accepted"
    [ "$(grep -cF "$line" <<<"$err")" = 1 ] || fail "no single line '$line' in: $err"
done
summary=$(grep -F "${#bad[@]} environment variables with a bad value:" <<<"$err") || fail "no summary in: $err"
for kv in "${bad[@]}"; do grep -qF "${kv%%=*}" <<<"$summary" || fail "the summary does not name ${kv%%=*}: $summary"; done
echo "gshmem-info: exit $rc naming all ${#bad[@]} bad values; exit 0 and the ranges with a clean environment"

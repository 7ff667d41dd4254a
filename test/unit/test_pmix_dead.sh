#!/usr/bin/env bash
# Runs test_pmix_dead under mpirun (4 ranks, rank 1 SIGKILLs itself) with recovery on, so the
# launcher keeps the others running: each survivor must print an OK line naming rank 1.
#   test_pmix_dead.sh MPIRUN TEST_PMIX_DEAD
set -u
mpirun=$1 exe=$2 np=4
out=$(timeout -k 5 90 "$mpirun" --oversubscribe --allow-run-as-root --enable-recovery -quiet -np $np "$exe" </dev/null 2>&1)
rc=$?
echo "$out"
grep -q "skipped" <<<"$out" && ! grep -q "OK in\|FAIL" <<<"$out" && exit 77
[ $rc -ne 124 ] && [ $rc -ne 137 ] || { echo "test_pmix_dead.sh: mpirun did not end within 90 s" >&2; exit 1; }
ok=$(grep -c "^test_pmix_dead: rank [0-9]*: OK in" <<<"$out")
if [ "$ok" != $((np - 1)) ] || grep -q "FAIL" <<<"$out"; then
    echo "test_pmix_dead.sh: $ok of $((np - 1)) surviving ranks named rank 1 as gone" >&2
    exit 1
fi
echo "test_pmix_dead.sh: all $ok surviving ranks named rank 1 as gone and the operation"

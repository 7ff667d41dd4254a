#!/usr/bin/env bash
# as-hosts.sh K PROGRAM [ARGS...]: runs PROGRAM with GSHMEM_HOST_ID=host<rank / K>, so the PEs of
# one machine act as hosts of K PEs each (P2P inside a host, the remote transport across).
# gshmemrun sets GSHMEM_RANK; run-suite.sh uses this when GSHMEM_TEST_HOSTS=K is set.
set -euo pipefail
k=$1
shift
if [ -z "${GSHMEM_RANK:-}" ] || ! [ "$k" -ge 1 ] 2>/dev/null; then
    echo "as-hosts.sh: needs K >= 1 and GSHMEM_RANK (start it under gshmemrun)" >&2
    exit 2
fi
export GSHMEM_HOST_ID="host$((GSHMEM_RANK / k))"
exec "$@"

# Sourced by the shell tests that count their checks: a scratch folder ($tmp) removed on exit,
# pass and fail lines, and the count of failed checks ($failures) for the verdict.
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

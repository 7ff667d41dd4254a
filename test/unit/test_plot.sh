#!/usr/bin/env bash
# perftest/plot.py and perftest/compare/table.py on the JSON files under test/data (no GPU):
# the plot command writes one non-empty PNG per benchmark run at several sizes plus the bar
# chart of the one-size ones, refuses a file without measurements by name, and the table shows
# gshmem's ratio to the fastest other library. Skipped (77) where no python3 has matplotlib.
# Usage: test_plot.sh SOURCE_ROOT
# shellcheck disable=SC2034 # rc is read by the checks, through eval
set -uo pipefail
src=${1:?usage: test_plot.sh SOURCE_ROOT}
py=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "test_plot: SKIP: no python3 with matplotlib (apt install python3-matplotlib)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }

# the comparison's JSON: one PNG per multi-size bench, the one-size ones in single_size.png
"$py" "$src/perftest/plot.py" -o "$tmp/cmp" "$src/test/data/compare-sample.json" > "$tmp/cmp.out" 2> "$tmp/cmp.err"
rc=$?
check "plot.py on the comparison exits 0" '[ $rc -eq 0 ] || { cat "$tmp/cmp.err"; false; }'
for f in put_bw get_bw allreduce fcollect single_size; do
    check "comparison: $f.png is a non-empty PNG" "is_png '$tmp/cmp/$f.png'"
done
check "comparison: the one-size benches have no PNG of their own" '[ ! -e "$tmp/cmp/p_lat.png" ] && [ ! -e "$tmp/cmp/barrier.png" ]'
check "comparison: every path printed exists" 'while read -r p; do [ -f "$p" ] || exit 1; done < "$tmp/cmp.out"'
check "comparison: 5 paths printed" '[ "$(wc -l < "$tmp/cmp.out")" -eq 5 ]'

# a perftest's --json rows (op/scope/type series) and two files at once
"$py" "$src/perftest/plot.py" -o "$tmp/pt" "$src/test/data/perftest-sample.json" "$src/test/data/compare-sample.json" \
    > "$tmp/pt.out" 2> "$tmp/pt.err"
rc=$?
check "plot.py on perftest + comparison JSON exits 0" '[ $rc -eq 0 ] || { cat "$tmp/pt.err"; false; }'
for f in put_bw reduce_on_stream reduce allreduce single_size; do
    check "perftest: $f.png is a non-empty PNG" "is_png '$tmp/pt/$f.png'"
done

# no measurements: a clear error naming the file, exit 1, no PNG
printf '# not json\n{"hello":1}\n' > "$tmp/empty.json"
"$py" "$src/perftest/plot.py" -o "$tmp/none" "$tmp/empty.json" > /dev/null 2> "$tmp/none.err"
rc=$?
check "a file without measurements: exit 1" '[ $rc -eq 1 ]'
check "a file without measurements: the message names it" 'grep -q "no measurements in $tmp/empty.json" "$tmp/none.err"'
"$py" "$src/perftest/plot.py" -o "$tmp/none" "$tmp/missing.json" > /dev/null 2> "$tmp/miss.err"
rc=$?
check "a missing file: exit 2, named" '[ $rc -eq 2 ] && grep -q "missing.json: no such file" "$tmp/miss.err"'

# the table: gshmem's ratio to the fastest other library, the CSV and JSON copies
"$py" "$src/perftest/compare/table.py" --csv "$tmp/t.csv" --json "$tmp/t.json" "$src/test/data/compare-sample.json" \
    > "$tmp/table.out" 2>&1
rc=$?
check "table.py exits 0" '[ $rc -eq 0 ] || { cat "$tmp/table.out"; false; }'
# allreduce of 8 B in the sample: gshmem 2.4 us, nvshmem 7.3, nccl 5.6 -> 5.6 / 2.4 = 2.33
check "table: allreduce 8 B ratio is nccl's 5.6 us / gshmem's 2.4 us" \
    'grep -Eq "^allreduce +8 +2\.40 .* 5\.60 .* 2\.33$" "$tmp/table.out"'
check "table: CSV header and one line per (bench, bytes)" \
    '[ "$(head -n 1 "$tmp/t.csv" | tr -d "\r")" = "bench,bytes,gshmem_us,gshmem_GB/s,nvshmem_us,nvshmem_GB/s,nccl_us,nccl_GB/s,gshmem_x" ] && [ "$(wc -l < "$tmp/t.csv")" -eq 38 ]'
check "table: --json keeps every row" '[ "$(wc -l < "$tmp/t.json")" -eq 87 ]'

# a recorded comparison (perftest/compare/run.sh -n 2 --quick on one H200, 2 PEs under MPS)
"$py" "$src/perftest/plot.py" -o "$tmp/rec" "$src/test/data/compare-h200-1gpu.json" > "$tmp/rec.out" 2> "$tmp/rec.err"
rc=$?
check "plot.py on the recorded comparison exits 0" '[ $rc -eq 0 ] || { cat "$tmp/rec.err"; false; }'
for f in put_bw get_bw put_lat get_lat allreduce fcollect alltoall broadcast single_size; do
    check "recorded: $f.png is a non-empty PNG" "is_png '$tmp/rec/$f.png'"
done
"$py" "$src/perftest/compare/table.py" "$src/test/data/compare-h200-1gpu.json" > "$tmp/rec-table.out" 2>&1
# allreduce of 8 B in that run: gshmem 2.453 us, nvshmem 6.982 us -> 2.85
check "recorded table: allreduce 8 B ratio is nvshmem's 6.98 us / gshmem's 2.45 us" \
    'grep -Eq "^allreduce +8 +2\.45 .* 6\.98 .* 2\.85$" "$tmp/rec-table.out"'

[ $fail = 0 ] && echo "test_plot: all passed"
exit $fail

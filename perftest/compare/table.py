#!/usr/bin/env python3
"""The comparison's table: table.py [--json FILE] [--csv FILE] ROWS.json...

ROWS are JSON lines from nvshmem_bench/nccl_bench ({"lib","bench","bytes","us","GB/s",...}) and
{"lib","skipped"} lines from run.sh. Prints one line per (bench, bytes): each library's time in us
(and GB/s where data moves) and gshmem's speed against the fastest other library that ran the row,
best other time / gshmem time (above 1: gshmem is faster). --json writes the rows as read (JSON
lines, what perftest/plot.py reads); --csv the table."""
import argparse
import csv
import json
import sys

LIBS = ["gshmem", "nvshmem", "nccl"]


def read_rows(paths):
    rows, skipped = [], {}
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except ValueError as e:
                    sys.exit(f"table.py: {path}:{n}: not JSON: {e}")
                if "skipped" in r:
                    skipped[r["lib"]] = r["skipped"]
                elif {"lib", "bench", "bytes", "us"} <= r.keys():
                    rows.append(r)
    return rows, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    ap.add_argument("--csv")
    ap.add_argument("rows", nargs="+")
    a = ap.parse_args()
    rows, skipped = read_rows(a.rows)
    libs = [l for l in LIBS if any(r["lib"] == l for r in rows)]
    libs += sorted({r["lib"] for r in rows} - set(libs))
    order, table = [], {}
    for r in rows:
        key = (r["bench"], r["bytes"])
        if key not in table:
            order.append(key)
            table[key] = {}
        table[key][r["lib"]] = r

    # benches in the order they first appear, each by size
    first = {}
    for b, _ in order:
        first.setdefault(b, len(first))
    order.sort(key=lambda k: (first[k[0]], k[1]))

    def ratio(cells):
        mine = cells.get("gshmem")
        others = [c["us"] for l, c in cells.items() if l != "gshmem" and c["us"] > 0]
        if not mine or not others or mine["us"] <= 0:
            return None
        return min(others) / mine["us"]

    head = f"{'bench':<18} {'bytes':>10}" + "".join(f" {l + ' us':>12} {l + ' GB/s':>13}" for l in libs)
    print(head + f" {'gshmem x':>9}")
    out = []
    for key in order:
        cells, x = table[key], ratio(table[key])
        line = f"{key[0]:<18} {key[1]:>10}"
        rec = {"bench": key[0], "bytes": key[1]}
        for l in libs:
            c = cells.get(l)
            us = f"{c['us']:.2f}" if c else "-"
            gbs = f"{c['GB/s']:.1f}" if c and key[1] and c.get("GB/s") else "-"
            line += f" {us:>12} {gbs:>13}"
            rec[f"{l}_us"] = c["us"] if c else ""
            rec[f"{l}_GB/s"] = c.get("GB/s", "") if c and key[1] else ""
        xs = f"{x:.2f}" if x is not None else "-"
        rec["gshmem_x"] = round(x, 3) if x is not None else ""
        print(line + f" {xs:>9}")
        out.append(rec)
    for l, why in skipped.items():
        print(f"# {l}: {why}")
    print("# gshmem x = fastest other library's time / gshmem's time (above 1: gshmem is faster)")
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
            for l, why in skipped.items():
                f.write(json.dumps({"lib": l, "skipped": why}) + "\n")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out[0].keys()) if out else ["bench", "bytes"])
            w.writeheader()
            w.writerows(out)
    if not rows:
        print("table.py: no rows to show", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

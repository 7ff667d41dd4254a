#!/usr/bin/env python3
"""The tables of docs/performance.md's generated part: results_tables.py [RESULTS.json ...]

Reads the results files (default: perftest/results/*.json beside this script, in name order) and
prints markdown: for each machine kind, the rows measured beside NVIDIA NVSHMEM and NCCL (rows with
"bench": perftest/compare/run.sh), each with gshmem's speed against the fastest other library
(best other time / gshmem time; above 1: gshmem is faster), then one line per perftest command
measured beside the previous release ("landed_time_us"): its sizes and the range over them of
previous time / this time (above 1: faster than before). Every figure comes from the files."""
import glob
import json
import os
import sys


def size_text(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def us_text(us):
    return f"{us:.2f}" if us < 100 else f"{us:.0f}"


def compare_table(rows):
    out = ["| command | bench | size | gshmem us | NVSHMEM us | NCCL us | x |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        others = [r[k] for k in ("nvshmem_time_us", "nccl_time_us") if r.get(k)]
        x = f"{min(others) / r['time_us']:.2f}" if others and r["time_us"] > 0 else "-"
        cells = [f"`{r['command']}`", r["bench"], size_text(r["size"]) if r["size"] else "-", us_text(r["time_us"]),
                 us_text(r["nvshmem_time_us"]) if r.get("nvshmem_time_us") else "-",
                 us_text(r["nccl_time_us"]) if r.get("nccl_time_us") else "-", x]
        out.append("| " + " | ".join(cells) + " |")
    return out


def release_table(rows):
    by = {}
    for r in rows:
        key = (r["command"], r.get("env", ""), r.get("transport", ""), r.get("op") or "")
        by.setdefault(key, []).append(r)
    out = ["| command | env | transport | op | sizes | previous / this |", "|---|---|---|---|---|---|"]
    for (cmd, env, transport, op), rs in by.items():
        ratios = [r["landed_time_us"] / r["time_us"] for r in rs if r["time_us"] > 0]
        sizes = sorted(r["size"] for r in rs)
        span = "-" if sizes[-1] == 0 else size_text(sizes[0]) if sizes[0] == sizes[-1] else f"{size_text(sizes[0])} - {size_text(sizes[-1])}"
        rng = f"{min(ratios):.2f}" if round(min(ratios), 2) == round(max(ratios), 2) else f"{min(ratios):.2f} - {max(ratios):.2f}"
        out.append(f"| `{cmd}` | {('`' + env + '`') if env else '-'} | {transport or '-'} | {op or '-'} | {span} | {rng} |")
    return out


def main(paths):
    if not paths:
        here = os.path.dirname(os.path.abspath(__file__))
        paths = sorted(glob.glob(os.path.join(here, "results", "*.json")))
    if not paths:
        sys.exit("results_tables.py: no results files")
    lines = []
    for path in paths:
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"results_tables.py: {path}: {e}")
        kind = d.get("machine_kind") or os.path.splitext(os.path.basename(path))[0]
        rows = d.get("rows", [])
        comp = [r for r in rows if "bench" in r and "time_us" in r]
        rel = [r for r in rows if "bench" not in r and r.get("landed_time_us") and r.get("time_us")]
        lines += [f"### {kind}", "", f"{len(rows)} rows in `perftest/results/{os.path.basename(path)}`.", ""]
        if comp:
            lines += ["Beside NVIDIA NVSHMEM and NCCL (x = the fastest other library's time / gshmem's):", ""]
            lines += compare_table(comp) + [""]
        if rel:
            lines += ["Beside the previous release, in the same call (previous time / this time, over the sizes):", ""]
            lines += release_table(rel) + [""]
    print("\n".join(lines).rstrip())


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Plots perftest results: plot.py [-o DIR] FILE...

FILE holds JSON rows, one object a line (a JSON array works too; other lines are skipped): what a
perftest prints with --json ({"test","size","time_us",...,"GB/s" or "algbw(GB/s)" or
"latency_us", optional "op","scope","type"}) or what perftest/compare/run.sh --json writes
({"lib","bench","bytes","us","GB/s"}). For each benchmark run at two sizes or more, DIR/NAME.png
shows its bandwidth (where it has one) and its time per operation against the size, log-x, one
line per library (comparison) or per op/scope/type (perftest; per file too when several files
hold the same perftest). Benchmarks of one size (latencies, atomics, barriers) share
DIR/single_size.png, a bar chart of their times. Prints the paths written."""
import argparse
import json
import os
import re
import sys

BW_KEYS = ("GB/s", "algbw(GB/s)")
TIME_KEYS = ("latency_us", "us", "time_us")


def load(path):
    """The JSON objects of one file, in order."""
    with open(path) as f:
        text = f.read()
    if text.lstrip().startswith("["):
        try:
            return [r for r in json.loads(text) if isinstance(r, dict)]
        except ValueError as e:
            sys.exit(f"plot.py: {path}: not JSON: {e}")
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            rows.append(json.loads(line))
        except ValueError as e:
            sys.exit(f"plot.py: {path}:{n}: not JSON: {e}")
    return rows


def normalize(row, stem, several_files):
    """(figure, series, size, time_us, GB/s or None), or None for a row that is no measurement."""
    if "bench" in row and "lib" in row:
        fig, series, size = row["bench"], row["lib"], row.get("bytes")
    elif "test" in row:
        fig, size = row["test"], row.get("size")
        parts = [str(row[k]) for k in ("op", "scope", "type") if row.get(k)]
        series = " ".join(parts) or fig
        if several_files:
            series = f"{stem}: {series}" if parts else stem
    else:
        return None
    t = next((row[k] for k in TIME_KEYS if isinstance(row.get(k), (int, float))), None)
    if size is None or t is None:
        return None
    bw = next((row[k] for k in BW_KEYS if isinstance(row.get(k), (int, float))), None)
    return fig, series, int(size), float(t), (float(bw) if bw and size else None)


def human(n):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", default="plots", help="folder for the PNGs (made if missing)")
    ap.add_argument("files", nargs="+", help="JSON rows of a perftest or of the comparison")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("plot.py: needs matplotlib (apt install python3-matplotlib, or pip install matplotlib)", file=sys.stderr)
        return 1

    several = len(a.files) > 1
    data = {}  # figure -> series -> [(size, us, GB/s)]
    for path in a.files:
        if not os.path.isfile(path):
            print(f"plot.py: {path}: no such file", file=sys.stderr)
            return 2
        stem = os.path.splitext(os.path.basename(path))[0]
        for row in load(path):
            m = normalize(row, stem, several)
            if m:
                data.setdefault(m[0], {}).setdefault(m[1], []).append(m[2:])
    if not data:
        print(f"plot.py: no measurements in {', '.join(a.files)}", file=sys.stderr)
        return 1
    os.makedirs(a.out, exist_ok=True)
    written, single = [], []
    for fig, series in data.items():
        sizes = {p[0] for pts in series.values() for p in pts}
        if len(sizes) < 2:
            single += [(fig, s, pts[-1][1]) for s, pts in series.items()]
            continue
        has_bw = any(p[2] for pts in series.values() for p in pts)
        f, axes = plt.subplots(1, 2 if has_bw else 1, figsize=(12 if has_bw else 6.5, 4.5), squeeze=False)
        axes = axes[0]
        for name, pts in series.items():
            pts = sorted(pts)
            xs = [p[0] for p in pts]
            if has_bw:
                bw = [(p[0], p[2]) for p in pts if p[2]]
                axes[0].plot([b[0] for b in bw], [b[1] for b in bw], marker="o", label=name)
            axes[-1].plot(xs, [p[1] for p in pts], marker="o", label=name)
        ticks = sorted(sizes)
        step = max(1, len(ticks) // 8)
        for ax, ylabel in zip(axes, (["GB/s"] if has_bw else []) + ["us per operation"]):
            ax.set_xscale("log", base=2)
            ax.set_xticks(ticks[::step])
            ax.set_xticklabels([human(t) for t in ticks[::step]], rotation=45)
            ax.set_xlabel("size (bytes)")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        axes[-1].set_yscale("log")
        axes[-1].yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        if has_bw:
            axes[0].set_title(f"{fig}: bandwidth")
        axes[-1].set_title(f"{fig}: time")
        f.tight_layout()
        path = os.path.join(a.out, re.sub(r"[^A-Za-z0-9_.+-]", "_", fig) + ".png")
        f.savefig(path, dpi=100)
        plt.close(f)
        written.append(path)
    if single:
        f, ax = plt.subplots(figsize=(8, 0.35 * len(single) + 1.5))
        labels = [f"{fig} [{s}]" for fig, s, _ in single]
        names = sorted({s for _, s, _ in single})
        colors = [f"C{names.index(s) % 10}" for _, s, _ in single]
        ax.barh(range(len(single)), [t for _, _, t in single], color=colors)
        ax.set_yticks(range(len(single)))
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("us per operation")
        ax.set_title("benchmarks of one size")
        ax.grid(True, axis="x", alpha=0.3)
        f.tight_layout()
        path = os.path.join(a.out, "single_size.png")
        f.savefig(path, dpi=100)
        plt.close(f)
        written.append(path)
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())

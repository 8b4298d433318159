"""Compaction of a changing Delta table: `strata compact table` against
deltalake's `optimize.compact()` and `optimize.z_order(["id"])`, paired.

    python benches/compact_tables.py STRATA_BIN [--rows N] [--runs R] [--out FILE]

The table is the 20-version history of an `orders` spec (deletion
vectors, so updated rows land in new files across the whole key range)
written by strata. Each run copies it afresh for each subject, in
alternating order, and times the subject's compaction alone (wall
seconds). Before and after, the overlap depth by `id` is read from the
table's metadata by `strata compact table --dry-run` (the same measure
for every subject), and the bytes each rewrite removed from the log's
last commit. strata's budget is set to the bytes deltalake's compact
rewrote (rounded up to MiB), so both rewrite at most as much. Prints
Markdown: per subject the median seconds, the ratio to strata, the
depth after and the bytes rewritten.
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

SPEC = """
name = "orders"
primary_key = "id"
changes = { versions = 20, insert = 0.02, update = 0.05, delete = 0.01, keys = { zipf = 1.1 } }

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[fields]]
name = "status"
type = "utf8"
weighted = { values = ["open", "paid", "shipped"], weights = [5, 3, 2] }

[[fields]]
name = "amount"
type = "float64"
uniform = { min = 1.0, max = 500.0 }

[[fields]]
name = "note"
type = "utf8"
text = { min = 20, max = 80 }
"""


def depth(strata, table):
    out = subprocess.run([strata, "compact", "table", str(table), "--sort-by", "id", "--budget-mb", "1",
                          "--dry-run"], check=True, capture_output=True, text=True).stdout
    m = re.search(r"(\d+) data files in .* overlap depth by `id`: max (\d+), average ([\d.]+)", out)
    return int(m.group(1)), int(m.group(2)), float(m.group(3))


def removed_bytes(table):
    log = sorted((table / "_delta_log").glob("*.json"))[-1]
    total = 0
    for line in log.read_text().splitlines():
        a = json.loads(line)
        if "remove" in a:
            total += a["remove"].get("size") or 0
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("strata")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    from deltalake import DeltaTable

    work = Path(tempfile.mkdtemp(prefix="compact-tables-"))
    try:
        (work / "orders.toml").write_text(SPEC)
        subprocess.run([args.strata, "generate", "-q", "--spec", str(work / "orders.toml"), "--target-records",
                        str(args.rows), "--num-writers", "8", "--format", "delta", "--write-mode",
                        "deletion-vectors", "--output-dir", str(work / "template")], check=True)
        template = work / "template" / "orders"
        before = depth(args.strata, template)

        def fresh(name):
            dst = work / name
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(template, dst)
            return dst

        # deltalake's compact first, to learn the bytes it rewrites.
        t = fresh("probe")
        DeltaTable(str(t)).optimize.compact()
        budget_mb = max(1, -(-removed_bytes(t) // (1 << 20)))

        def run_strata(t):
            subprocess.run([args.strata, "compact", "table", str(t), "--sort-by", "id", "--budget-mb",
                            str(budget_mb)], check=True, capture_output=True)

        subjects = {
            "strata compact table": run_strata,
            "deltalake optimize.compact()": lambda t: DeltaTable(str(t)).optimize.compact(),
            "deltalake optimize.z_order([id])": lambda t: DeltaTable(str(t)).optimize.z_order(["id"]),
        }
        times = {s: [] for s in subjects}
        after = {}
        rewritten = {}
        names = list(subjects)
        for r in range(args.runs):
            order = names if r % 2 == 0 else names[::-1]
            for s in order:
                t = fresh("run")
                t0 = time.perf_counter()
                subjects[s](t)
                times[s].append(time.perf_counter() - t0)
                after[s] = depth(args.strata, t)
                rewritten[s] = removed_bytes(t)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        lines = [
            f"compaction of a {args.rows}-row, 20-version `orders` Delta history (deletion vectors), by `id`; "
            f"{args.runs} paired runs, alternating order; commit {commit}; {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} CPUs",
            "",
            f"before: {before[0]} data files, overlap depth max {before[1]}, average {before[2]:.2f}; "
            f"strata's budget {budget_mb} MiB (the bytes deltalake's compact rewrote)",
            "",
            "| subject | median s | ratio to strata | files after | depth max after | depth avg after | bytes rewritten |",
            "|---|---|---|---|---|---|---|",
        ]
        base = statistics.median(times["strata compact table"])
        for s in names:
            m = statistics.median(times[s])
            f, dmax, davg = after[s]
            lines.append(f"| {s} | {m:.3f} | {m / base:.2f} | {f} | {dmax} | {davg:.2f} | {rewritten[s]} |")
        text = "\n".join(lines)
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

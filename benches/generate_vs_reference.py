#!/usr/bin/env python3
"""End-to-end benchmark of `strata generate`, side by side with a peer.

Runs each command in alternating rounds (so drift of a noisy machine hits
both alike), after a `sync`, measures wall time and the child's CPU time (user + sys), and
reports median / min / max, records/s, records/s per core and the ratio of
median wall times. The peer is the reference program
`parquet-nested-parallel` (built outside this repository; pass its path
with --reference). Results are appended to benches/results/generate.md
with the date, machine and commit.

    benches/generate_vs_reference.py --reference /path/to/parquet-nested-parallel
    benches/generate_vs_reference.py --threads-scan      # 1..nproc threads
    benches/generate_vs_reference.py --baseline /path/to/older/strata
    benches/generate_vs_reference.py --presets --records 2000000

--presets runs every preset to Arrow IPC, to Parquet through strata's
direct encoder and through parquet's Arrow writer (`--encoder arrow`),
uncompressed and with zstd, and reports each Parquet time against the IPC
time of the same preset and codec, and the direct encoder against the
Arrow writer.

--baseline compares the `contacts` preset (and the same spec given as a
file) with a `strata` binary built from an earlier commit, outside this
repository (e.g. `git worktree add /tmp/old COMMIT` and a release build
there): the check that the spec engine keeps the speed of the generator it
replaced.
"""

import argparse
import datetime as dt
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchenv import ROOT, commit, machine


PRESETS = ["contacts", "wide-u64", "events", "lineitem"]


def timed(cmd, out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    # Flush the previous run's dirty pages so its writeback does not land
    # on this run (hyperfine's `--prepare sync` in the reference's reports).
    os.sync()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    size = sum(f.stat().st_size for f in Path(out_dir).rglob("*") if f.is_file())
    return wall, cpu, size


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", help="path of the parquet-nested-parallel binary")
    ap.add_argument("--records", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads-scan", action="store_true", help="strata at 1..nproc threads instead")
    ap.add_argument(
        "--encoders",
        action="store_true",
        help="strata's direct encoder vs parquet's Arrow writer, per codec, and the file-per-writer layout",
    )
    ap.add_argument(
        "--presets",
        action="store_true",
        help="every preset to IPC and to Parquet through both encoders, uncompressed and zstd",
    )
    ap.add_argument("--baseline", help="path of a strata binary from an earlier commit, run side by side")
    ap.add_argument("--no-save", action="store_true", help="print only, do not append to the results file")
    ap.add_argument("--work-dir", help="where outputs go (default: a temporary directory)")
    args = ap.parse_args()

    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "strata"], check=True, cwd=ROOT)
    strata = str(ROOT / "target" / "release" / "strata")
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="strata-bench-"))
    n = args.records
    cores = os.cpu_count() or 1

    cases = []
    if args.presets:
        base = [strata, "generate", "-q", "--overwrite", "--target-records", str(n)]
        for preset in PRESETS:
            for codec in ["none", "zstd"]:
                for label, extra in [
                    ("ipc", ["--format", "ipc"]),
                    ("parquet direct", ["--format", "parquet", "--encoder", "auto"]),
                    ("parquet arrow", ["--format", "parquet", "--encoder", "arrow"]),
                ]:
                    out = work / f"{preset}-{codec}-{label.replace(' ', '-')}"
                    cmd = base + ["--preset", preset, "--compression", codec, "--output-dir", str(out)] + extra
                    cases.append((f"{preset} {codec} {label}", cmd, out, cores))
    elif args.encoders:
        base = [strata, "generate", "-q", "--overwrite", "--target-records", str(n)]
        for codec in ["none", "snappy", "lz4", "zstd"]:
            for enc in ["auto", "arrow"]:
                out = work / f"{codec}-{enc}"
                cases.append((f"--compression {codec} --encoder {enc}", base + ["--compression", codec, "--encoder", enc, "--output-dir", str(out)], out, cores))
        # One task (and row group) per file: the "each writer encodes a
        # file" shape, against the default row-group tasks.
        out = work / "per-file"
        cases.append((f"--num-writers {cores} --row-group-rows {n} (a file per task)", base + ["--num-writers", str(cores), "--row-group-rows", str(n), "--output-dir", str(out)], out, cores))
        out = work / "per-rg"
        cases.append((f"--num-writers {cores} (row-group tasks)", base + ["--num-writers", str(cores), "--output-dir", str(out)], out, cores))
    elif args.baseline:
        spec = str(ROOT / "crates" / "gen" / "specs" / "contacts.toml")
        for threads in [None, 1]:
            t = [] if threads is None else ["--threads", str(threads)]
            label = "" if threads is None else f" --threads {threads}"
            used = cores if threads is None else threads
            out = work / f"b{threads}"
            cases.append((f"baseline{label}", [args.baseline, "generate", "-q", "--overwrite", "--target-records", str(n), "--output-dir", str(out)] + t, out, used))
            out = work / f"p{threads}"
            cases.append((f"strata --preset contacts{label}", [strata, "generate", "-q", "--overwrite", "--target-records", str(n), "--output-dir", str(out)] + t, out, used))
            out = work / f"f{threads}"
            cases.append((f"strata --spec contacts.toml{label}", [strata, "generate", "-q", "--overwrite", "--target-records", str(n), "--spec", spec, "--output-filename", "contacts", "--output-dir", str(out)] + t, out, used))
    elif args.threads_scan:
        t = 1
        while t <= cores:
            cases.append((f"strata --threads {t}", [strata, "generate", "-q", "--overwrite", "--target-records", str(n), "--threads", str(t), "--output-dir", str(work / "s")], work / "s", t))
            t *= 2
    else:
        if args.reference:
            ref_writers = max(1, cores // 2)
            cases.append((f"reference --num-writers {ref_writers}", [args.reference, "--target-records", str(n), "--num-writers", str(ref_writers), "--output-dir", str(work / "r"), "--output-filename", "contacts"], work / "r", cores))
        cases.append(("strata generate (defaults)", [strata, "generate", "-q", "--overwrite", "--target-records", str(n), "--output-dir", str(work / "s")], work / "s", cores))
        cases.append(("strata generate --num-writers 1", [strata, "generate", "-q", "--overwrite", "--target-records", str(n), "--num-writers", "1", "--output-dir", str(work / "s1")], work / "s1", cores))

    # One untimed warm-up of each, then alternating timed rounds.
    for _, cmd, out, _ in cases:
        timed(cmd, out)
    results = {name: [] for name, *_ in cases}
    for _ in range(args.runs):
        for name, cmd, out, _ in cases:
            results[name].append(timed(cmd, out))
    shutil.rmtree(work, ignore_errors=True)

    lines = [
        f"### {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit()}",
        "",
        f"Machine: {machine()}. {n:,} records, {args.runs} runs each after one warm-up, alternating.",
        "",
        "| command | wall median (min-max) s | CPU median s | M records/s | M records/s per core | output MB |",
        "|---|---|---|---|---|---|",
    ]
    medians = {}
    for name, _, _, used in cases:
        walls = [r[0] for r in results[name]]
        cpus = [r[1] for r in results[name]]
        med = statistics.median(walls)
        medians[name] = med
        rate = n / med / 1e6
        lines.append(
            f"| `{name}` | {med:.3f} ({min(walls):.3f}-{max(walls):.3f}) | {statistics.median(cpus):.2f} | {rate:.2f} | {rate / used:.2f} | {results[name][0][2] / 1e6:.1f} |"
        )
    if args.baseline:
        base_version = subprocess.run([args.baseline, "--version"], capture_output=True, text=True).stdout.strip()
        lines.append(f"\nBaseline: `{args.baseline}` ({base_version}), the same flags.")
        for k, v in medians.items():
            if not k.startswith("baseline"):
                b = medians["baseline" + k.split("contacts", 1)[1].split(".toml", 1)[-1]]
                lines.append(f"\nRatio `{k}` vs its baseline (median wall): **{v / b:.3f}** (below 1.10 is within 10%).")
    if args.presets:
        lines.append("")
        lines.append("| preset | codec | Parquet direct / IPC | Parquet Arrow writer / IPC | direct speed-up over the Arrow writer |")
        lines.append("|---|---|---|---|---|")
        for preset in PRESETS:
            for codec in ["none", "zstd"]:
                ipc = medians[f"{preset} {codec} ipc"]
                direct = medians[f"{preset} {codec} parquet direct"]
                arrow = medians[f"{preset} {codec} parquet arrow"]
                lines.append(f"| {preset} | {codec} | {direct / ipc:.2f}x | {arrow / ipc:.2f}x | **{arrow / direct:.2f}x** |")
    if args.reference:
        ref = next(k for k in medians if k.startswith("reference"))
        for k, v in medians.items():
            if k != ref:
                lines.append(f"\nRatio `{k}` vs `{ref}` (median wall): **{medians[ref] / v:.2f}x** faster.")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_save:
        results_file = ROOT / "benches" / "results" / "generate.md"
        if not results_file.exists():
            results_file.write_text("# `strata generate` benchmark results\n\nAppended by `benches/generate_vs_reference.py`.\n\n")
        with results_file.open("a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    sys.exit(main())

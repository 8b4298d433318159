"""`tpchgen-cli` writing TPC-H tables to Parquet for `strata bench
pipeline`, beside strata's `lineitem` preset (and the `orders` dataset):
`tpchgen-cli parquet -s SF --tables TABLES -c CODEC -n THREADS` (TABLES
`lineitem` unless the request names others), the program found next to this
Python (the package's console script). Each run writes into an output
directory emptied beforehand, untimed (tpchgen-cli skips tables whose file
exists); wall time and the child's CPU time (user + system) are measured
around the process. Request on stdin, samples on stdout."""

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def program():
    """The tpchgen-cli beside this interpreter (a virtual environment's
    bin directory), else none."""
    here = os.path.dirname(sys.executable)
    for name in ("tpchgen-cli", "tpchgen-cli.exe"):
        path = os.path.join(here, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    req = json.load(sys.stdin)
    cli = program()
    if cli is None:
        print(json.dumps({"unavailable": f"tpchgen-cli is not installed next to {sys.executable}"}))
        return
    samples = []
    with tempfile.TemporaryDirectory(dir=req["dir"]) as out:
        command = [
            cli,
            "parquet",
            "--scale-factor", str(req["scale_factor"]),
            "--tables", req.get("tables", "lineitem"),
            "--compression", req["codec"],
            "--num-threads", str(req["threads"]),
            "--output-dir", out,
            "--no-progress",
            "--quiet",
        ]
        targets = [os.path.join(out, f"{t}.parquet") for t in req.get("tables", "lineitem").split(",")]
        for i in range(req["warmup"] + req["runs"]):
            # Untimed: the previous run's file goes, so that this run
            # writes (and does not skip) the table.
            for entry in os.listdir(out):
                path = os.path.join(out, entry)
                if os.path.isdir(path):
                    shutil.rmtree(path)
                else:
                    os.remove(path)
            c0, t0 = children_cpu(), time.perf_counter()
            done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
            wall, cpu = time.perf_counter() - t0, children_cpu() - c0
            if done.returncode != 0:
                err = done.stderr.decode(errors="replace").strip().splitlines()
                raise SystemExit(f"tpchgen-cli failed ({done.returncode}): {err[-1] if err else ''}")
            for target in targets:
                if not os.path.isfile(target) or os.path.getsize(target) == 0:
                    raise SystemExit(f"tpchgen-cli wrote no {target}")
            if i >= req["warmup"]:
                samples.append({"wall": wall, "cpu": cpu})
    print(json.dumps({"cases": {req["name"]: samples}}))


main()

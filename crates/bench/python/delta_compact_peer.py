"""deltalake's compaction for `strata bench compact`, beside `strata
compact table` on the same Delta table: `optimize.compact()` (bin-packing
the files as they are) or `optimize.z_order([key])` (every file rewritten
in Z-order of the key), as `op` says. Each run compacts a fresh copy of
the template (copied untimed); wall and CPU time are the call's. The last
run's table is left at `keep`, for the caller to measure its overlap
depth. Request on stdin, samples on stdout."""

import json
import os
import shutil
import sys
import tempfile
import time


def main():
    req = json.load(sys.stdin)
    try:
        from deltalake import DeltaTable
    except ImportError as e:
        print(json.dumps({"unavailable": f"deltalake is not installed ({e})"}))
        return
    samples = []
    with tempfile.TemporaryDirectory(dir=req["dir"]) as work:
        table = os.path.join(work, "table")
        for i in range(req["warmup"] + req["runs"]):
            shutil.rmtree(table, ignore_errors=True)
            shutil.copytree(req["template"], table)
            c0, t0 = time.process_time(), time.perf_counter()
            t = DeltaTable(table)
            if req["op"] == "compact":
                t.optimize.compact()
            else:
                t.optimize.z_order([req["key"]])
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if i >= req["warmup"]:
                samples.append({"wall": wall, "cpu": cpu})
        shutil.rmtree(req["keep"], ignore_errors=True)
        shutil.move(table, req["keep"])
    print(json.dumps({"cases": {req["name"]: samples}}))


main()

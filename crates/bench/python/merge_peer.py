"""DuckDB's merge for `strata bench compact`: the sorted input files read
and written back as one file sorted by `id`, zstd level 1, 2 threads
(`COPY (SELECT * FROM read_parquet([...]) ORDER BY id) TO ...`). Request
on stdin, samples on stdout."""

import json
import os
import sys
import tempfile
import time


def main():
    req = json.load(sys.stdin)
    try:
        import duckdb
    except ImportError as e:
        print(json.dumps({"unavailable": f"duckdb is not installed ({e})"}))
        return
    files = ", ".join("'" + p + "'" for p in req["inputs"])
    samples = []
    with tempfile.TemporaryDirectory(dir=req["dir"]) as out:
        target = os.path.join(out, "merged.parquet")
        for i in range(req["warmup"] + req["runs"]):
            con = duckdb.connect()
            con.execute("SET threads TO 2")
            con.execute("SET enable_progress_bar = false")
            c0, t0 = time.process_time(), time.perf_counter()
            con.execute(
                f"COPY (SELECT * FROM read_parquet([{files}]) ORDER BY id) TO '{target}' "
                "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)"
            )
            # The removal is timed, as the Rust side's temporary output is.
            os.remove(target)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            con.close()
            if i >= req["warmup"]:
                samples.append({"wall": wall, "cpu": cpu})
    print(json.dumps({"cases": {req["name"]: samples}}))


main()

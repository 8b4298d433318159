"""Peers of `strata bench sort`: DuckDB (`COPY (SELECT * FROM
read_parquet(...) ORDER BY ...) TO ...`, zstd level 1, the same threads and
memory limit, spilling to a temporary directory) and, for the in-memory
cases, pyarrow (`read_table`, `sort_by`, `write_table` with zstd level 1).
Request on stdin, samples on stdout; a case a peer cannot run (DuckDB
out of memory at a small limit) is reported under "failed" with the
first line of its error."""

import json
import os
import sys
import tempfile
import time


def duckdb_run(case, threads, out, spill):
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads TO {threads}")
    con.execute(f"SET memory_limit = '{case['memory_limit_bytes']}B'")
    con.execute(f"SET temp_directory = '{spill}'")
    con.execute("SET enable_progress_bar = false")
    target = os.path.join(out, "sorted.parquet")
    c0, t0 = time.process_time(), time.perf_counter()
    con.execute(
        f"COPY (SELECT * FROM read_parquet('{case['glob']}') ORDER BY {case['order']}) TO '{target}' "
        "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)"
    )
    os.remove(target)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    con.close()
    return {"wall": wall, "cpu": cpu}


def pyarrow_run(case, threads, out, spill):
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    pa.set_cpu_count(threads)
    target = os.path.join(out, "sorted.parquet")
    c0, t0 = time.process_time(), time.perf_counter()
    table = ds.dataset(case["dir"], format="parquet").to_table()
    table = table.sort_by([(k, o) for k, o in case["pyarrow_keys"]])
    pq.write_table(table, target, compression="zstd", compression_level=1)
    del table
    os.remove(target)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall": wall, "cpu": cpu}


def main():
    req = json.load(sys.stdin)
    subject = req["subject"]
    try:
        if subject == "duckdb":
            import duckdb  # noqa: F401
        else:
            import pyarrow  # noqa: F401
    except ImportError as e:
        print(json.dumps({"unavailable": f"{subject} is not installed ({e})"}))
        return
    run = duckdb_run if subject == "duckdb" else pyarrow_run
    cases, failed = {}, {}
    for case in req["cases"]:
        samples = []
        try:
            with tempfile.TemporaryDirectory(dir=req["dir"]) as out, tempfile.TemporaryDirectory(dir=req["dir"]) as spill:
                for i in range(req["warmup"] + req["runs"]):
                    s = run(case, req["threads"], out, spill)
                    if i >= req["warmup"]:
                        samples.append(s)
        except Exception as e:  # a peer that cannot sort at this limit
            failed[case["name"]] = str(e).splitlines()[0] if str(e) else type(e).__name__
            continue
        cases[case["name"]] = samples
    print(json.dumps({"cases": cases, "failed": failed}))


main()
